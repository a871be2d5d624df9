// Run under mpirun by the MPI tests: computes the permanents of
// permanent_mpi_cases through the library, as generated code does, inside a
// DistributedScope. Rank 0 prints one line per case, "NAME VALUE" (a hex
// float, or an integer in exact mode) or "NAME error: MESSAGE"; the exit
// code is 1 when a case did not end as it should.
//
//   permanent_mpi_probe [--case NAME] [--checkpoint FILE] [--chunk-limit N] [--progress]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "permanent_mpi_cases.h"
#include "tcc/runtime/distributed.h"
#include "tcc/runtime/tensor_format.h"

using namespace tcc;
using namespace tcc::permanent_test;

int main(int argc, char** argv) {
  std::string only;
  rt::PermanentOptions options;
  options.progress = rt::ProgressMode::Off;
  for (int k = 1; k < argc; ++k) {
    std::string flag = argv[k];
    if (flag == "--progress") options.progress = rt::ProgressMode::On;
    else if (k + 1 < argc && flag == "--case") only = argv[++k];
    else if (k + 1 < argc && flag == "--checkpoint") options.checkpointPath = argv[++k];
    else if (k + 1 < argc && flag == "--chunk-limit") options.chunkLimit = std::atoll(argv[++k]);
    else {
      std::fprintf(stderr, "permanent_mpi_probe: unknown argument %s\n", argv[k]);
      return 2;
    }
  }
  try {
    rt::DistributedScope ranks;
    int failures = 0;
    for (const MpiCase& each : mpiCases()) {
      if (!only.empty() && each.name != only) continue;
      rt::Tensor matrix = toTensor(each.matrix, rt::TensorFormat::csc());
      std::string value;
      try {
        if (each.exact) {
          value = std::to_string(exactPermanent(matrix, options));
        } else {
          char text[40];
          std::snprintf(text, sizeof text, "%a", floatPermanent(matrix, options));
          value = text;
        }
        failures += !each.error.empty();
      } catch (const std::exception& error) {
        value = std::string("error: ") + error.what();
        failures += value.find(each.error) == std::string::npos || each.error.empty();
      }
      if (ranks.isRoot()) std::printf("%s %s\n", each.name.c_str(), value.c_str());
    }
    std::fflush(stdout);
    return failures ? 1 : 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "permanent_mpi_probe: %s\n", error.what());
    return 2;
  }
}
