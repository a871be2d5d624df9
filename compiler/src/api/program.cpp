#include <set>

#include "tcc/ir/index_queries.h"
#include "tcc/tcc.h"

namespace tcc {

Program Program::fromFile(const std::string& path) {
  Program program;
  program.program_ = frontend::parseProgramFile(path);
  return program;
}

Program Program::fromText(const std::string& text, const std::string& name) {
  Program program;
  program.program_ = frontend::parseProgram(text, name);
  return program;
}

Program Program::fromSyntax(frontend::Program syntax) {
  Program program;
  program.program_ = std::move(syntax);
  return program;
}

Program Program::fromStatements(std::vector<ir::IndexStmt> statements, std::vector<TensorVar> tensors) {
  std::set<std::string> names;
  for (const auto& tensor : tensors)
    if (!names.insert(tensor.name()).second) throw Error("tensor " + tensor.name() + " is listed twice");
  for (const auto& statement : statements) {
    auto used = ir::tensorsRead(statement);
    for (const auto& written : ir::tensorsWritten(statement)) used.push_back(written);
    for (const auto& tensor : used)
      if (std::find(tensors.begin(), tensors.end(), tensor) == tensors.end())
        throw Error("statement uses tensor " + tensor.name() + ", which is not in the program's tensor list");
  }
  Program program;
  program.program_.tensors = std::move(tensors);
  program.program_.statements = std::move(statements);
  program.program_.sourcePath = "<builder>";
  return program;
}

}  // namespace tcc
