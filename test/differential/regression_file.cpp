#include "regression_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tcc::differential {

std::string regressionFileText(const Case& c, const std::vector<std::string>& headerLines) {
  std::string text;
  for (const auto& line : headerLines) text += "# " + line + "\n";
  text += c.programText();
  std::vector<TensorDecl> bound = c.inputs;
  if (c.data.count(c.output.name)) bound.push_back(c.output);  // an update in place's values from before
  for (const auto& tensor : bound) {
    const rt::Coo& coo = c.data.at(tensor.name);
    text += "# input " + tensor.name;
    for (int32_t dim : coo.dims) text.append(" ").append(std::to_string(dim));
    text += "\n";
    for (size_t e = 0; e < coo.nnz(); ++e) {
      text += "# entry " + tensor.name;
      for (int m = 0; m < coo.order(); ++m) text.append(" ").append(std::to_string(coo.coords[static_cast<size_t>(m)][e]));
      char value[64];
      std::snprintf(value, sizeof value, " %.17g\n", coo.values[e]);
      text += value;
    }
  }
  return text;
}

RegressionCase parseRegressionFile(const std::string& text) {
  RegressionCase result;
  result.programText = text;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    auto fail = [&] { throw std::invalid_argument("line " + std::to_string(number) + ": malformed: " + line); };
    if (line.rfind("# open bug:", 0) == 0) {
      result.openBug = line.substr(12);
    } else if (line.rfind("# input ", 0) == 0) {
      std::istringstream fields(line.substr(8));
      std::string name;
      fields >> name;
      std::vector<int32_t> dims;
      int32_t dim;
      while (fields >> dim) dims.push_back(dim);
      if (name.empty() || !fields.eof()) fail();
      result.inputs[name] = rt::Coo::ofShape(dims);
    } else if (line.rfind("# entry ", 0) == 0) {
      std::istringstream fields(line.substr(8));
      std::string name;
      fields >> name;
      auto found = result.inputs.find(name);
      if (found == result.inputs.end()) fail();
      rt::Coo& coo = found->second;
      std::vector<int32_t> coordinate(static_cast<size_t>(coo.order()));
      for (auto& c : coordinate)
        if (!(fields >> c)) fail();
      double value;
      if (!(fields >> value)) fail();
      coo.push(coordinate.data(), value);
    }
  }
  return result;
}

RegressionCase readRegressionFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("cannot open " + path);
  std::stringstream text;
  text << file.rdbuf();
  return parseRegressionFile(text.str());
}

}  // namespace tcc::differential
