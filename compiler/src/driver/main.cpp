// tcc: the sparse tensor algebra compiler's command line.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tcc: a sparse tensor algebra compiler", "tcc"};
  app.require_subcommand(1);
  app.fallthrough(false);
  app.footer(
      "Floating point: kernels are compiled in strict mode by default (no FMA contraction, sums in loop order), so "
      "results are the same bits on every backend and every run (on the cuda target: no contraction, each sum in one "
      "order every run, its kernel's, not necessarily the CPU's; the intrinsics keep their own numerics). `fp fast` "
      "in a program, or --fp fast on compile, run and explain, allows FMA, reassociated and vectorized scalar sums "
      "and the host's full vector width (usually faster; the last bits may differ; inf and NaN still propagate).");
  tcc::driver::addCheckCommand(app);
  tcc::driver::addCompileCommand(app);
  tcc::driver::addExplainCommand(app);
  tcc::driver::addRunCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& failure) {
    return failure.get_exit_code();
  } catch (const CLI::ParseError& error) {
    int printed = app.exit(error);  // prints help, or the usage error and a hint
    return printed == 0 ? 0 : tcc::driver::kExitUsageError;
  } catch (const std::exception& error) {
    std::cerr << "tcc: error: " << error.what() << "\n";
    return tcc::driver::kExitUserError;
  }
  return 0;
}
