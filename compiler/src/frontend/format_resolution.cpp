#include "format_resolution.h"

#include <charconv>
#include <set>

namespace tcc::frontend {
namespace {

const char* const kKnownFormats =
    "dense, sparse, csr, csc, dcsr, dcsc, coo, csf, nm(N,M,L), a level list such as "
    "{dense, compressed}, or a name declared with 'format'";

bool isNamedFormat(const std::string& name) {
  for (const char* known : {"dense", "sparse", "csr", "csc", "dcsr", "dcsc", "coo", "csf"})
    if (name == known) return true;
  return false;
}

// The order a named format is defined for, when only one.
std::string namedFormatOrders(const std::string& name) {
  if (name == "sparse") return "1";
  return "2";
}

std::string plural(int count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

class FormatResolver {
 public:
  FormatResolver(SemanticContext& context, const std::string& tensorName)
      : context_(context), tensorName_(tensorName) {}

  std::optional<ir::Format> resolve(const syntax::FormatSpec& spec, int order) {
    std::optional<ir::Format> base;
    if (const auto* levels = boost::get<syntax::LevelList>(&spec.base.get()))
      base = resolveLevels(*levels, order);
    else
      base = resolveTerm(boost::get<syntax::FormatTerm>(spec.base.get()), order);
    if (!base || !spec.order) return base;
    std::optional<std::vector<int>> modes = resolveModeOrder(*spec.order, base->order());
    if (!modes) return std::nullopt;
    return ir::Format(base->levels(), *modes);
  }

 private:
  std::optional<ir::Format> resolveLevels(const syntax::LevelList& list, int order) {
    std::vector<ir::LevelFormat> levels;
    bool ok = true;
    for (const syntax::FormatTerm& term : list.levels) {
      std::optional<ir::LevelFormat> level = resolveLevel(term);
      if (level) levels.push_back(*level);
      ok = ok && level.has_value();
    }
    if (!ok) return std::nullopt;
    if (static_cast<int>(levels.size()) != order) {
      error(list, formatName_ + " has " + plural(static_cast<int>(levels.size()), "level") +
                               " but tensor '" + tensorName_ + "' has order " +
                               std::to_string(order));
      return std::nullopt;
    }
    return ir::Format(levels);
  }

  // The arguments of a format that takes no `keyword = value` ones.
  std::optional<std::vector<syntax::NameOrInteger>> positionalArguments(const syntax::FormatTerm& term) {
    std::vector<syntax::NameOrInteger> arguments;
    if (!term.arguments) return arguments;
    for (const syntax::FormatArgument& argument : *term.arguments) {
      if (const auto* keyword = boost::get<syntax::KeywordArgument>(&argument.get())) {
        error(*keyword, "format '" + term.name.name + "' takes no keyword arguments");
        return std::nullopt;
      }
      arguments.push_back(boost::get<syntax::NameOrInteger>(argument.get()));
    }
    return arguments;
  }

  std::optional<ir::LevelFormat> resolveLevel(const syntax::FormatTerm& term) {
    const std::string& name = term.name.name;
    auto positional = positionalArguments(term);
    if (!positional) return std::nullopt;
    std::vector<syntax::NameOrInteger> arguments = *positional;
    if (name == "nm") return resolveNM(term);
    if (name == "dense") {
      if (!arguments.empty()) {
        error(term, "level format 'dense' takes no arguments");
        return std::nullopt;
      }
      return ir::LevelFormat::dense();
    }
    if (name != "compressed" && name != "singleton") {
      error(term.name, "unknown level format '" + name +
                                    "'; expected dense, compressed, singleton or nm(N,M,L)");
      return std::nullopt;
    }
    bool unique = true, ordered = true;
    for (const syntax::NameOrInteger& argument : arguments) {
      const auto* property = boost::get<syntax::Identifier>(&argument.get());
      std::string text = property ? property->name : "";
      if (text == "unique") unique = true;
      else if (text == "nonunique") unique = false;
      else if (text == "ordered") ordered = true;
      else if (text == "unordered") ordered = false;
      else {
        const syntax::x3::position_tagged& where =
            property ? static_cast<const syntax::x3::position_tagged&>(*property)
                     : boost::get<syntax::Integer>(argument.get());
        error(where, "unknown level property '" + context_.textOf(where) +
                                  "'; expected unique, nonunique, ordered or unordered");
        return std::nullopt;
      }
    }
    return name == "compressed" ? ir::LevelFormat::compressed(unique, ordered)
                                : ir::LevelFormat::singleton(unique, ordered);
  }

  std::optional<ir::LevelFormat> resolveNM(const syntax::FormatTerm& term) {
    std::vector<std::int64_t> values;
    auto positional = positionalArguments(term);
    if (!positional) return std::nullopt;
    {
      for (const syntax::NameOrInteger& argument : *positional) {
        const auto* integer = boost::get<syntax::Integer>(&argument.get());
        if (!integer) {
          error(boost::get<syntax::Identifier>(argument.get()),
                         "nm(N,M,L) takes integers");
          return std::nullopt;
        }
        std::optional<std::int64_t> value = integerValue(context_, *integer);
        if (!value) return std::nullopt;
        values.push_back(*value);
      }
    }
    if (values.size() != 3) {
      error(term, "nm(N,M,L) takes 3 integers, not " + std::to_string(values.size()));
      return std::nullopt;
    }
    auto [n, m, l] = std::tuple(values[0], values[1], values[2]);
    if (n < 1 || m < 1 || l < 1 || n > m || m > (1 << 20) || l > (1 << 20)) {
      error(term, "nm(N,M,L) needs 1 <= N <= M and L >= 1");
      return std::nullopt;
    }
    return ir::LevelFormat::nm(static_cast<int>(n), static_cast<int>(m), static_cast<int>(l));
  }

  std::optional<ir::Format> resolveTerm(const syntax::FormatTerm& term, int order) {
    const std::string& name = term.name.name;
    if (name == "nm") {
      // nm(N,M,L) alone: dense outer levels, the last level N:M.
      std::optional<ir::LevelFormat> last = resolveNM(term);
      if (!last) return std::nullopt;
      if (order < 1) {
        error(term, "format nm(N,M,L) needs a tensor of order 1 or more, but '" +
                                 tensorName_ + "' is a scalar");
        return std::nullopt;
      }
      std::vector<ir::LevelFormat> levels(order - 1, ir::LevelFormat::dense());
      levels.push_back(*last);
      return ir::Format(levels);
    }
    if (auto declared = context_.formats.find(name); declared != context_.formats.end()) {
      if (term.arguments) {
        error(term, "format '" + name + "' takes no arguments");
        return std::nullopt;
      }
      if (!declared->second.spec) return std::nullopt;  // its declaration was reported
      // Errors inside a declared format point at its use.
      FormatResolver inner(context_, tensorName_);
      inner.redirect_ = redirect_ ? redirect_ : context_.positionOf(term);
      inner.formatName_ = "format '" + name + "'";
      return inner.resolve(*declared->second.spec, order);
    }
    if (name == "sparse_workspace") {
      error(term.name, "sparse_workspace(...) is the format of a workspace tensor that precompute(expr, i_vars, "
                       "o_vars, W) fills; declare it on the tensor itself, not through 'format'");
      return std::nullopt;
    }
    if (!isNamedFormat(name)) {
      error(term.name, "unknown format '" + name + "'; expected " + kKnownFormats);
      return std::nullopt;
    }
    if (term.arguments) {
      error(term, "format '" + name + "' takes no arguments");
      return std::nullopt;
    }
    std::optional<ir::Format> format = ir::Format::named(name, order);
    if (!format)
      error(term.name, "format '" + name + "' is for tensors of order " +
                                    namedFormatOrders(name) + ", but '" + tensorName_ +
                                    "' has order " + std::to_string(order));
    return format;
  }

public:
  std::optional<WorkspaceFormat> resolveWorkspace(const syntax::FormatSpec& spec, int order) {
    const auto& term = boost::get<syntax::FormatTerm>(spec.base.get());
    if (order < 1 || order > 4) {
      error(term, "a sparse workspace has order 1 to 4, but '" + tensorName_ + "' has order " + std::to_string(order) +
                      (order == 0 ? " (a scalar needs no workspace)" : ""));
      return std::nullopt;
    }
    WorkspaceFormat format;
    for (int mode = 0; mode < order; ++mode) format.modeOrdering.push_back(mode);
    if (spec.order) {
      std::optional<std::vector<int>> modes = resolveModeOrder(*spec.order, order);
      if (!modes) return std::nullopt;
      format.modeOrdering = *modes;
    }
    std::set<std::string> seen;
    for (const syntax::FormatArgument& argument : term.arguments.value_or(std::vector<syntax::FormatArgument>{})) {
      const auto* keyword = boost::get<syntax::KeywordArgument>(&argument.get());
      if (!keyword) {
        const auto& value = boost::get<syntax::NameOrInteger>(argument.get());
        const syntax::x3::position_tagged& where =
          boost::get<syntax::Identifier>(&value.get())
            ? static_cast<const syntax::x3::position_tagged&>(boost::get<syntax::Identifier>(value.get()))
            : boost::get<syntax::Integer>(value.get());
        error(where, "sparse_workspace takes keyword arguments: policy = NAME, capacity = N, pipeline = on|off, "
                     "double_buffer = on|off");
        return std::nullopt;
      }
      const std::string& name = keyword->keyword.name;
      if (!seen.insert(name).second) {
        error(keyword->keyword, "keyword '" + name + "' given twice");
        return std::nullopt;
      }
      const auto* identifier = boost::get<syntax::Identifier>(&keyword->value.get());
      const auto* integer = boost::get<syntax::Integer>(&keyword->value.get());
      if (name == "capacity") {
        if (!integer) {
          error(*keyword, "keyword 'capacity' takes a positive integer");
          return std::nullopt;
        }
        std::optional<std::int64_t> value = integerValue(context_, *integer);
        if (!value) return std::nullopt;
        if (*value < 1) {
          error(*integer, "the first capacity of a sparse workspace must be positive, not " + std::to_string(*value));
          return std::nullopt;
        }
        format.capacity = *value;
      } else if (name == "policy") {
        if (!identifier) {
          error(*keyword, "keyword 'policy' takes a name: bucket, hash, coord, map, vector or a registered policy");
          return std::nullopt;
        }
        format.policy = identifier->name;
        format.policyLocation = context_.locate(*identifier);
      } else if (name == "pipeline" || name == "double_buffer") {
        if (!identifier || (identifier->name != "on" && identifier->name != "off")) {
          error(*keyword, "keyword '" + name + "' takes on or off");
          return std::nullopt;
        }
        (name == "pipeline" ? format.pipelining : format.doubleBuffering) = identifier->name == "on";
      } else {
        error(keyword->keyword, "sparse_workspace has no keyword '" + name +
                                    "'; expected policy, capacity, pipeline or double_buffer");
        return std::nullopt;
      }
    }
    return format;
  }

 private:
  std::optional<std::vector<int>> resolveModeOrder(const syntax::ModeOrder& spec, int order) {
    std::vector<int> modes;
    std::vector<bool> seen(order, false);
    bool permutation = static_cast<int>(spec.modes.size()) == order;
    for (const syntax::Integer& digits : spec.modes) {
      std::optional<std::int64_t> mode = integerValue(context_, digits);
      if (!mode) return std::nullopt;
      if (*mode >= order || seen[*mode]) permutation = false;
      else seen[*mode] = true;
      modes.push_back(static_cast<int>(*mode));
    }
    if (!permutation) {
      std::string range = order == 0 ? "nothing" : "0.." + std::to_string(order - 1);
      error(spec, "mode order must list each of " + range + " exactly once");
      return std::nullopt;
    }
    return modes;
  }

  void error(const syntax::x3::position_tagged& node, std::string message) {
    context_.error(redirect_ ? redirect_ : context_.positionOf(node), std::move(message));
  }

  SemanticContext& context_;
  const std::string& tensorName_;
  const char* redirect_ = nullptr;
  std::string formatName_ = "format";
};

}  // namespace

bool isBuiltinFormatName(const std::string& name) {
  return name == "nm" || name == "sparse_workspace" || isNamedFormat(name);
}

bool isWorkspaceFormat(const syntax::FormatSpec& spec) {
  const auto* term = boost::get<syntax::FormatTerm>(&spec.base.get());
  return term && term->name.name == "sparse_workspace";
}

std::optional<WorkspaceFormat> resolveWorkspaceFormat(SemanticContext& context, const syntax::FormatSpec& spec,
                                                      int order, const std::string& tensorName) {
  return FormatResolver(context, tensorName).resolveWorkspace(spec, order);
}

std::optional<std::int64_t> integerValue(SemanticContext& context, const syntax::Integer& integer) {
  std::int64_t value = 0;
  const std::string& digits = integer.digits;
  auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (status != std::errc() || end != digits.data() + digits.size()) {
    context.error(integer, "integer '" + digits + "' is out of range");
    return std::nullopt;
  }
  return value;
}

std::optional<ir::Format> resolveFormat(SemanticContext& context, const syntax::FormatSpec& spec,
                                        int order, const std::string& tensorName) {
  return FormatResolver(context, tensorName).resolve(spec, order);
}

bool checkFormatDeclaration(SemanticContext& context, const syntax::FormatDeclaration& declaration) {
  const syntax::FormatSpec& spec = declaration.format;
  FormatResolver resolver(context, declaration.name.name);
  if (const auto* levels = boost::get<syntax::LevelList>(&spec.base.get()))
    return resolver.resolve(spec, static_cast<int>(levels->levels.size())).has_value();
  // A named base fits tensors of some orders only; it is checked at each use.
  const auto& term = boost::get<syntax::FormatTerm>(spec.base.get());
  if (term.name.name == "nm") return resolver.resolve(spec, 2).has_value();
  if (isNamedFormat(term.name.name) || context.formats.count(term.name.name)) return true;
  context.error(term.name, "unknown format '" + term.name.name + "'; expected " + kKnownFormats);
  return false;
}

}  // namespace tcc::frontend
