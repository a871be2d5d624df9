#include "schedule_checker.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>

#include "expression_builder.h"
#include "format_resolution.h"

namespace tcc::frontend {
namespace {

// Levenshtein distance, for "did you mean".
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i)
    text += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return text;
}

std::string ordinal(size_t position) {
  static const char* const kNames[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
  return position < 6 ? kNames[position] : "argument " + std::to_string(position + 1);
}

class CommandChecker {
 public:
  CommandChecker(SemanticContext& context, const syntax::ScheduleCommand& command,
                 const ScheduleCommandSpec& spec)
      : context_(context), command_(command), spec_(spec) {}

  std::optional<ScheduleCommand> check() {
    ScheduleCommand result{spec_.name, {}, context_.locate(command_)};
    std::vector<const syntax::ScheduleArgument*> positional;
    std::vector<const syntax::KeywordArgument*> keywords;
    for (const syntax::ScheduleArgument& argument : command_.arguments) {
      if (const auto* keyword = boost::get<syntax::KeywordArgument>(&argument.get())) {
        keywords.push_back(keyword);
      } else {
        if (!keywords.empty()) {
          context_.error(positionOf(argument), "positional argument after a keyword argument in '" +
                                                   spec_.name + "'");
          return std::nullopt;
        }
        positional.push_back(&argument);
      }
    }
    if (!checkCount(positional.size())) return std::nullopt;
    bool ok = true;
    for (size_t position = 0; position < positional.size(); ++position) {
      const ScheduleParameter& parameter = parameterAt(position);
      std::optional<ScheduleArgument> argument;
      if (const auto* tuple = boost::get<syntax::IndexTuple>(&positional[position]->get()))
        argument = checkIndexTuple(*tuple, parameter, position);
      else
        argument = checkPositional(boost::get<syntax::Expression>(positional[position]->get()), parameter, position);
      if (argument) result.arguments.push_back(std::move(*argument));
      ok = ok && argument.has_value();
    }
    // precompute's dense form takes one index each; lists go with a workspace tensor.
    if (ok && spec_.name == "precompute" && positional.size() == 3) {
      for (size_t position : {size_t{1}, size_t{2}}) {
        if (result.arguments[position].kind != ScheduleArgument::Kind::IndexList) continue;
        context_.error(positionOf(*positional[position]),
                       "precompute into a dense workspace takes one index, not a list; a list goes with a "
                       "workspace tensor: precompute(expression, {i_vars}, {o_vars}, W)");
        ok = false;
      }
    }
    std::vector<std::string> seenKeywords;
    for (const syntax::KeywordArgument* keyword : keywords) {
      std::optional<ScheduleArgument> argument = checkKeyword(*keyword, seenKeywords);
      if (argument) result.arguments.push_back(std::move(*argument));
      ok = ok && argument.has_value();
    }
    if (!ok) return std::nullopt;
    return result;
  }

 private:
  const ScheduleParameter& parameterAt(size_t position) const {
    size_t required = spec_.required.size();
    if (position < required) return spec_.required[position];
    if (spec_.variadic) return spec_.required.back();
    return spec_.optional[position - required];
  }

  bool checkCount(size_t count) {
    size_t least = spec_.required.size();
    size_t most = spec_.variadic ? SIZE_MAX : least + spec_.optional.size();
    if (count >= least && count <= most) return true;
    std::string expected;
    if (spec_.variadic) expected = "at least " + std::to_string(least);
    else if (least == most) expected = std::to_string(least);
    else expected = std::to_string(least) + " to " + std::to_string(most);
    std::string noun = (spec_.variadic || most != 1 || least != most) ? " arguments" : " argument";
    if (most == 0) {
      expected = "no";
      noun = spec_.keywords.empty() ? " arguments" : " positional arguments";
    }
    context_.error(command_.name, "'" + spec_.name + "' takes " + expected + noun + ", but " +
                                      std::to_string(count) + (count == 1 ? " was" : " were") +
                                      " given; usage: " + spec_.signature);
    return false;
  }

  const syntax::x3::position_tagged& positionOf(const syntax::ScheduleArgument& argument) const {
    if (const auto* tuple = boost::get<syntax::IndexTuple>(&argument.get())) return *tuple;
    if (const auto* keyword = boost::get<syntax::KeywordArgument>(&argument.get())) return *keyword;
    return boost::get<syntax::Expression>(argument.get());
  }

  // `{i, j}` where a parameter takes index variables.
  std::optional<ScheduleArgument> checkIndexTuple(const syntax::IndexTuple& tuple, const ScheduleParameter& parameter,
                                                  size_t position) {
    using Kind = ScheduleParameterKind;
    if (parameter.kind != Kind::IndexVariables && parameter.kind != Kind::IndexVariablesOrNew) {
      context_.error(tuple, describe(position, parameter) + " cannot be a list of index variables");
      return std::nullopt;
    }
    ScheduleArgument argument;
    argument.kind = ScheduleArgument::Kind::IndexList;
    argument.text = context_.textOf(tuple);
    argument.location = context_.locate(tuple);
    for (const syntax::Identifier& index : tuple.indices) {
      if (!checkIndexName(index, parameter.kind == Kind::IndexVariablesOrNew, position, parameter)) return std::nullopt;
      if (std::find(argument.identifiers.begin(), argument.identifiers.end(), index.name) !=
          argument.identifiers.end()) {
        context_.error(index, "index variable '" + index.name + "' is listed twice");
        return std::nullopt;
      }
      argument.identifiers.push_back(index.name);
    }
    return argument;
  }

  // An index variable that must exist, or may be new.
  bool checkIndexName(const syntax::Identifier& index, bool mayBeNew, size_t position,
                      const ScheduleParameter& parameter) {
    const std::string& name = index.name;
    bool exists = context_.indexVars.count(name) > 0;
    if (!mayBeNew && !exists) {
      context_.undeclaredError(index, "unknown index variable '" + name + "' in '" + spec_.name + "'");
      return false;
    }
    if (context_.tensors.count(name) || isReservedWord(name)) {
      context_.error(index, "'" + name + "' cannot name an index variable (" + describe(position, parameter) + ")");
      return false;
    }
    if (!exists) {
      context_.indexVars.emplace(name, ir::IndexVar(name));
      context_.scheduleIndexVars.insert(name);
    }
    return true;
  }

  // "the second argument of 'split' (outer index)"
  std::string describe(size_t position, const ScheduleParameter& parameter) const {
    return "the " + ordinal(position) + " argument of '" + spec_.name + "' (" + parameter.name + ")";
  }

  std::optional<ScheduleArgument> checkPositional(const syntax::Expression& expression,
                                                  const ScheduleParameter& parameter,
                                                  size_t position) {
    ScheduleArgument argument;
    argument.text = context_.textOf(expression);
    argument.location = context_.locate(expression);
    const syntax::Access* access = asAccess(expression);
    const bool bareName = access && !access->indices;
    const std::string name = bareName ? access->tensor.name : "";
    using Kind = ScheduleParameterKind;
    switch (parameter.kind) {
      case Kind::IndexVariables:
      case Kind::IndexVariablesOrNew: {
        if (!bareName) {
          context_.error(expression, describe(position, parameter) + " must be an index variable or a list {i, j}");
          return std::nullopt;
        }
        if (!checkIndexName(access->tensor, parameter.kind == Kind::IndexVariablesOrNew, position, parameter))
          return std::nullopt;
        argument.kind = ScheduleArgument::Kind::Identifier;
        argument.identifier = name;
        argument.identifiers = {name};
        return argument;
      }
      case Kind::Workspace: {
        auto declared = bareName ? context_.tensors.find(name) : context_.tensors.end();
        if (declared == context_.tensors.end() || !declared->second.isWorkspace) {
          if (bareName && declared == context_.tensors.end())
            context_.undeclaredError(expression, "unknown workspace '" + name + "' in '" + spec_.name + "'");
          else
            context_.error(expression, describe(position, parameter) + " must be a tensor declared in a "
                                       "sparse_workspace(...) format, like tensor W(I, J) : sparse_workspace(policy = hash)");
          return std::nullopt;
        }
        argument.kind = ScheduleArgument::Kind::Identifier;
        argument.identifier = name;
        return argument;
      }
      case Kind::IndexVariable:
      case Kind::NewIndexVariable:
      case Kind::IndexVariableOrNew: {
        if (!bareName) {
          context_.error(expression, describe(position, parameter) + " must be an index variable");
          return std::nullopt;
        }
        bool exists = context_.indexVars.count(name) > 0;
        if (parameter.kind == Kind::IndexVariable && !exists) {
          context_.undeclaredError(expression, "unknown index variable '" + name + "' in '" +
                                                   spec_.name + "'");
          return std::nullopt;
        }
        if (parameter.kind == Kind::NewIndexVariable && exists) {
          context_.error(expression, "index variable '" + name + "' already exists; " +
                                         describe(position, parameter) + " must be a new name");
          return std::nullopt;
        }
        if (context_.tensors.count(name) || isReservedWord(name)) {
          context_.error(expression, "'" + name + "' cannot name an index variable");
          return std::nullopt;
        }
        if (!exists) {
          context_.indexVars.emplace(name, ir::IndexVar(name));
          context_.scheduleIndexVars.insert(name);
        }
        argument.kind = ScheduleArgument::Kind::Identifier;
        argument.identifier = name;
        return argument;
      }
      case Kind::Integer: {
        const syntax::Number* number = asNumber(expression);
        std::int64_t value = 0;
        bool isInteger = number && number->text.find_first_of(".eE") == std::string::npos;
        if (isInteger) {
          auto [end, status] = std::from_chars(number->text.data(),
                                               number->text.data() + number->text.size(), value);
          isInteger = status == std::errc() && end == number->text.data() + number->text.size();
        }
        if (!isInteger || value < 1) {
          context_.error(expression, describe(position, parameter) + " must be a positive integer");
          return std::nullopt;
        }
        argument.kind = ScheduleArgument::Kind::Integer;
        argument.integer = value;
        return argument;
      }
      case Kind::Tensor: {
        if (!bareName || !context_.tensors.count(name)) {
          if (bareName)
            context_.undeclaredError(expression, "unknown tensor '" + name + "' in '" + spec_.name + "'");
          else
            context_.error(expression, describe(position, parameter) + " must be a tensor name");
          return std::nullopt;
        }
        argument.kind = ScheduleArgument::Kind::Identifier;
        argument.identifier = name;
        return argument;
      }
      case Kind::Access:
      case Kind::Expression: {
        if (parameter.kind == Kind::Access && (!access || !access->indices)) {
          context_.error(expression, describe(position, parameter) +
                                         " must be a tensor access like B(i,j)");
          return std::nullopt;
        }
        ExpressionBuilder builder(context_, ExpressionBuilder::Mode::Schedule, ir::Datatype::Float64);
        std::optional<ir::IndexExpr> built = builder.build(expression);
        if (!built) return std::nullopt;
        argument.kind = ScheduleArgument::Kind::Expression;
        argument.expression = *built;
        return argument;
      }
      case Kind::Choice: {
        if (!bareName || std::find(parameter.choices.begin(), parameter.choices.end(), name) ==
                             parameter.choices.end()) {
          context_.error(expression, describe(position, parameter) + " must be " +
                                         joined(parameter.choices));
          return std::nullopt;
        }
        argument.kind = ScheduleArgument::Kind::Identifier;
        argument.identifier = name;
        return argument;
      }
    }
    return std::nullopt;
  }

  std::optional<ScheduleArgument> checkKeyword(const syntax::KeywordArgument& keyword,
                                               std::vector<std::string>& seen) {
    const std::string& name = keyword.keyword.name;
    auto spec = std::find_if(spec_.keywords.begin(), spec_.keywords.end(),
                             [&](const ScheduleKeyword& candidate) { return candidate.name == name; });
    if (spec == spec_.keywords.end()) {
      std::vector<std::string> names;
      for (const ScheduleKeyword& known : spec_.keywords) names.push_back(known.name);
      context_.error(keyword.keyword, "'" + spec_.name + "' has no keyword '" + name + "'" +
                                          (names.empty() ? "" : "; expected " + joined(names)));
      return std::nullopt;
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      context_.error(keyword.keyword, "keyword '" + name + "' given twice");
      return std::nullopt;
    }
    seen.push_back(name);
    ScheduleArgument argument;
    argument.kind = ScheduleArgument::Kind::Keyword;
    argument.keyword = name;
    argument.text = context_.textOf(keyword);
    argument.location = context_.locate(keyword);
    const auto* integer = boost::get<syntax::Integer>(&keyword.value.get());
    const auto* identifier = boost::get<syntax::Identifier>(&keyword.value.get());
    if (spec->integerValue) {
      std::optional<std::int64_t> value;
      if (integer) value = integerValue(context_, *integer);
      if (!integer) context_.error(*identifier, "keyword '" + name + "' takes an integer");
      if (!value) return std::nullopt;
      if (*value < 1) {
        context_.error(*integer, "keyword '" + name + "' takes a positive integer");
        return std::nullopt;
      }
      argument.valueIsInteger = true;
      argument.integer = *value;
      return argument;
    }
    if (!identifier || (!spec->choices.empty() &&
                        std::find(spec->choices.begin(), spec->choices.end(), identifier->name) ==
                            spec->choices.end())) {
      const syntax::x3::position_tagged& where =
          identifier ? static_cast<const syntax::x3::position_tagged&>(*identifier) : *integer;
      context_.error(where, "keyword '" + name + "' takes " +
                                (spec->choices.empty() ? std::string("a name") : joined(spec->choices)));
      return std::nullopt;
    }
    argument.identifier = identifier->name;
    return argument;
  }

  SemanticContext& context_;
  const syntax::ScheduleCommand& command_;
  const ScheduleCommandSpec& spec_;
};

}  // namespace

std::vector<ScheduleCommand> checkSchedule(SemanticContext& context,
                                           const std::vector<syntax::ScheduleCommand>& commands) {
  std::vector<ScheduleCommand> result;
  for (const syntax::ScheduleCommand& command : commands) {
    const ScheduleCommandSpec* spec = findScheduleCommand(command.name.name);
    if (!spec) {
      std::string message = "unknown schedule command '" + command.name.name + "'";
      const ScheduleCommandSpec* closest = nullptr;
      size_t closestDistance = 3;  // suggest only near misses
      for (const ScheduleCommandSpec& candidate : scheduleCommandTable()) {
        size_t distance = editDistance(command.name.name, candidate.name);
        if (distance < closestDistance) {
          closest = &candidate;
          closestDistance = distance;
        }
      }
      if (closest) message += "; did you mean '" + closest->name + "'?";
      context.error(command.name, message);
      continue;
    }
    try {
      std::optional<ScheduleCommand> checked = CommandChecker(context, command, *spec).check();
      if (checked) result.push_back(std::move(*checked));
    } catch (const std::invalid_argument& error) {  // from the IR's make functions
      context.error(command, error.what());
    }
  }
  return result;
}

}  // namespace tcc::frontend
