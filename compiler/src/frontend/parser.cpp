#include "parser.h"

#include <algorithm>
#include <string_view>

#include "grammar.h"

namespace tcc::frontend {
namespace {

bool isIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentifierChar(char c) { return isIdentifierStart(c) || (c >= '0' && c <= '9'); }

class TopLevelParser {
 public:
  TopLevelParser(const SourceFile& source, ParsedFile& result, std::vector<Diagnostic>& diagnostics)
      : source_(source),
        result_(result),
        diagnostics_(diagnostics),
        cursor_{source.begin(), source.begin(), source.end(), result.positions} {}

  void parseFile() {
    while (true) {
      skipBlanks();
      if (atEnd()) return;
      parseItem();
    }
  }

 private:
  const char*& position() { return cursor_.position; }
  bool atEnd() const { return cursor_.position == cursor_.end; }

  // Whitespace, newlines and comments.
  void skipBlanks() {
    while (!atEnd()) {
      char c = *position();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++position();
      } else if (c == '#') {
        while (!atEnd() && *position() != '\n') ++position();
      } else {
        return;
      }
    }
  }

  // Spaces, tabs and a comment, but not the end of the line.
  void skipLineBlanks() {
    while (!atEnd()) {
      char c = *position();
      if (c == ' ' || c == '\t' || c == '\r') {
        ++position();
      } else if (c == '#') {
        while (!atEnd() && *position() != '\n') ++position();
      } else {
        return;
      }
    }
  }

  std::string_view nextWord() const {
    const char* end = cursor_.position;
    while (end != cursor_.end && isIdentifierChar(*end)) ++end;
    return {cursor_.position, static_cast<size_t>(end - cursor_.position)};
  }

  // Whether what follows `word` continues a statement (`fp(i) = ...`,
  // `fp = ...`), so that a tensor may still be named like a keyword.
  bool followedByStatementPart(std::string_view word) const {
    const char* next = word.data() + word.size();
    while (next != cursor_.end && (*next == ' ' || *next == '\t')) ++next;
    return next != cursor_.end && (*next == '(' || *next == '=' || *next == '+');
  }

  void report(const char* where, std::string message) {
    diagnostics_.push_back(source_.diagnose(where, std::move(message)));
  }

  // After an error, continue at the line following `where`.
  void recoverAfter(const char* where) {
    if (where > position()) position() = where;
    while (!atEnd() && *position() != '\n') ++position();
  }

  // After a schedule command that failed at `where`: on to the next line,
  // or to the '}' that closes the block where the block ends on this line,
  // so that a one-line block's mistake is reported once. Braces opened by
  // the command (`reorder({i, j})`) are its own.
  void recoverInScheduleBlock(const char* commandStart, const char* where) {
    int depth = 0;
    const char* scan = commandStart;
    for (; scan != cursor_.end && *scan != '\n' && *scan != '#'; ++scan) {
      if (*scan == '{') ++depth;
      if (*scan != '}') continue;
      if (depth == 0 && scan >= where) break;
      --depth;
    }
    position() = std::max(scan, position());
    if (scan == cursor_.end || *scan != '}') recoverAfter(position());
  }

  template <typename Node, typename ParseFunction>
  bool parseInto(ParseFunction parse, Node& node) {
    grammar::SyntaxError error;
    if (parse(cursor_, node, error)) return true;
    report(error.position, error.message);
    recoverAfter(error.position);
    return false;
  }

  // One item per line: after it only blanks, a comment or ';' may follow.
  bool expectEndOfItem(const char* expectation) {
    skipLineBlanks();
    if (atEnd() || *position() == '\n') return true;
    if (*position() == ';') {
      ++position();
      return true;
    }
    report(position(), expectation);
    recoverAfter(position());
    return false;
  }

  template <typename Node, typename ParseFunction>
  void parseLineItem(ParseFunction parse, const char* endExpectation) {
    Node node;
    if (!parseInto(parse, node)) return;
    if (expectEndOfItem(endExpectation)) result_.file.items.emplace_back(std::move(node));
  }

  void parseItem() {
    std::string_view word = nextWord();
    if (word == "tensor") {
      parseLineItem<syntax::TensorDeclaration>(grammar::parseTensorDeclaration,
                                               "expected ':', 'of' or the end of the line");
    } else if (word == "format") {
      parseLineItem<syntax::FormatDeclaration>(grammar::parseFormatDeclaration,
                                               "expected 'order' or the end of the line");
    } else if (word == "target") {
      parseLineItem<syntax::TargetDeclaration>(grammar::parseTargetDeclaration,
                                               "expected the end of the line");
    } else if (word == "fp" && !followedByStatementPart(word)) {
      parseLineItem<syntax::FloatingPointDeclaration>(grammar::parseFloatingPointDeclaration,
                                                      "expected the end of the line");
    } else if (word == "schedule") {
      parseScheduleBlock();
    } else if (!word.empty() && isIdentifierStart(word.front())) {
      parseLineItem<syntax::Statement>(
          grammar::parseStatement, "expected an operator ('+', '-', '*', '/') or the end of the line");
    } else {
      report(position(),
             "expected a tensor or format declaration, a statement, a schedule block, a target or an fp mode");
      recoverAfter(position());
    }
  }

  void parseScheduleBlock() {
    syntax::ScheduleBlock block;
    block.position = position();
    position() += std::string_view("schedule").size();
    skipBlanks();
    if (atEnd() || *position() != '{') {
      report(grammar::errorPosition(position(), source_.begin(), source_.end()),
             "expected '{' after 'schedule'");
      recoverAfter(position());
      return;
    }
    ++position();
    while (true) {
      skipBlanks();
      if (atEnd()) {
        SourceLocation opened = source_.locate(block.position);
        report(grammar::errorPosition(position(), source_.begin(), source_.end()),
               "expected '}' to close the schedule block opened at line " +
                               std::to_string(opened.line));
        break;
      }
      char c = *position();
      if (c == '}') {
        ++position();
        expectEndOfItem("expected the end of the line after the schedule block");
        break;
      }
      if (c == ';' || c == ',') {
        ++position();
        continue;
      }
      syntax::ScheduleCommand command;
      const char* commandStart = position();
      grammar::SyntaxError error;
      if (grammar::parseScheduleCommand(cursor_, command, error)) {
        block.commands.push_back(std::move(command));
      } else {
        report(error.position, error.message);
        recoverInScheduleBlock(commandStart, error.position);
      }
    }
    result_.file.items.emplace_back(std::move(block));
  }

  const SourceFile& source_;
  ParsedFile& result_;
  std::vector<Diagnostic>& diagnostics_;
  grammar::Cursor cursor_;
};

}  // namespace

ParsedFile parseSyntax(const SourceFile& source, std::vector<Diagnostic>& diagnostics) {
  ParsedFile result(source);
  TopLevelParser(source, result, diagnostics).parseFile();
  return result;
}

}  // namespace tcc::frontend
