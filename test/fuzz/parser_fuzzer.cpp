// libFuzzer target for the DSL front end. Any input must either parse or
// produce diagnostics; an escaping exception, a crash, a leak or a sanitizer
// report is a bug. A program that parses must also print as text that
// parses again and prints the same (the printer/parser round trip).
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>

#include "tcc/frontend/printer.h"
#include "tcc/frontend/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    printed = tcc::frontend::printProgram(tcc::frontend::parseProgram(text, "fuzz.tc"));
  } catch (const tcc::frontend::DiagnosticError& error) {
    for (const auto& diagnostic : error.diagnostics()) {
      if (diagnostic.location.line < 1 || diagnostic.location.column < 1) std::abort();
      // A message in words, not a C++ type of the parser's.
      if (diagnostic.message.find("boost") != std::string::npos) {
        std::fprintf(stderr, "message names a parser type: %s\n", diagnostic.message.c_str());
        std::abort();
      }
      (void)diagnostic.format();
    }
    return 0;
  }
  std::string reprinted;
  try {
    reprinted = tcc::frontend::printProgram(tcc::frontend::parseProgram(printed, "printed.tc"));
  } catch (const tcc::frontend::DiagnosticError& error) {
    std::fprintf(stderr, "printed program does not parse:\n%s\n%s", printed.c_str(), error.what());
    std::abort();
  }
  if (reprinted != printed) {
    std::fprintf(stderr, "round trip differs:\n%s\n---\n%s", printed.c_str(), reprinted.c_str());
    std::abort();
  }
  return 0;
}
