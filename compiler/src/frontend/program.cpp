#include "tcc/frontend/program.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "parser.h"
#include "semantic_analysis.h"
#include "source_file.h"

#include "tcc/ir/index_printer.h"

namespace tcc::frontend {

const ir::TensorVar* Program::findTensor(const std::string& name) const {
  for (const ir::TensorVar& tensor : tensors)
    if (tensor.name() == name) return &tensor;
  return nullptr;
}

const WorkspaceDeclaration* Program::findWorkspace(const std::string& name) const {
  for (const WorkspaceDeclaration& workspace : workspaces)
    if (workspace.tensor.name() == name) return &workspace;
  return nullptr;
}

std::string workspaceDeclarationString(const WorkspaceDeclaration& workspace) {
  const ir::TensorVar& tensor = workspace.tensor;
  std::string text = tensor.name() + "(";
  for (int mode = 0; mode < tensor.order(); ++mode) text += (mode ? ", " : "") + tensor.dimension(mode).toString();
  std::string options;
  auto add = [&](const std::string& option) { options += (options.empty() ? "" : ", ") + option; };
  if (!workspace.policy.empty()) add("policy = " + workspace.policy);
  if (workspace.capacity > 0) add("capacity = " + std::to_string(workspace.capacity));
  if (workspace.pipelining) add("pipeline = on");
  if (workspace.doubleBuffering) add("double_buffer = on");
  text += ") : sparse_workspace(" + options + ")";
  const ir::Format& format = tensor.format();
  bool identity = true;
  for (int level = 0; level < format.order(); ++level) identity = identity && format.modeOfLevel(level) == level;
  if (!identity) {
    text += " order (";
    for (int level = 0; level < format.order(); ++level)
      text += (level ? ", " : "") + std::to_string(format.modeOfLevel(level));
    text += ")";
  }
  return text + " of " + ir::toString(tensor.datatype());
}

const char* toString(FloatingPointMode mode) { return mode == FloatingPointMode::Fast ? "fast" : "strict"; }

std::optional<FloatingPointMode> parseFloatingPointMode(std::string_view text) {
  if (text == "strict") return FloatingPointMode::Strict;
  if (text == "fast") return FloatingPointMode::Fast;
  return std::nullopt;
}

Program parseProgram(std::string_view text, std::string fileName) {
  SourceFile source(std::string(text), fileName);
  std::vector<Diagnostic> diagnostics;
  ParsedFile parsed = parseSyntax(source, diagnostics);
  const bool hasSyntaxErrors = !diagnostics.empty();
  Program program = analyzeProgram(source, parsed, diagnostics, hasSyntaxErrors);
  if (!diagnostics.empty()) {
    std::stable_sort(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return std::pair(a.location.line, a.location.column) <
                              std::pair(b.location.line, b.location.column);
                     });
    throw DiagnosticError(std::move(diagnostics));
  }
  program.sourcePath = std::move(fileName);
  program.sourceText = std::string(text);
  return program;
}

Program parseProgramFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  if (file) text << file.rdbuf();
  if (!file || file.bad()) {
    std::vector<Diagnostic> diagnostics(1);
    diagnostics.front().location.file = path;
    diagnostics.front().message = "cannot read file";
    throw DiagnosticError(std::move(diagnostics));
  }
  return parseProgram(text.str(), path);
}

}  // namespace tcc::frontend
