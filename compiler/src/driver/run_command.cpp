// tcc run FILE --in B=b.mtx ... : read inputs into their declared formats,
// compile in-process, run, report, and write or print outputs.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "commands.h"
#include "tcc/runtime/distributed.h"
#include "tcc/runtime/errors.h"
#include "tcc/tcc.h"

namespace tcc::driver {

namespace {

std::pair<std::string, std::string> splitBinding(const std::string& binding, const char* flag) {
  auto equals = binding.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == binding.size()) {
    std::cerr << "tcc: error: " << flag << " expects NAME=FILE, got '" << binding << "'\n";
    throw CLI::RuntimeError(kExitUsageError);
  }
  return {binding.substr(0, equals), binding.substr(equals + 1)};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string formatDuration(double seconds) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(seconds < 1e-3 ? 1 : 3);
  if (seconds < 1e-3) {
    text << seconds * 1e6 << " us";
  } else {
    text << seconds * 1e3 << " ms";
  }
  return text.str();
}

void printEntries(const std::string& name, const Tensor& tensor) {
  rt::Coo coo = rt::unpack(tensor);
  std::cout << name << " (" << tensor.describe() << "):\n";
  std::cout << std::setprecision(17);
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::cout << " ";
    for (int mode = 0; mode < coo.order(); ++mode) std::cout << " " << coo.coords[mode][k];
    std::cout << (coo.order() ? "  " : " ") << coo.values[k] << "\n";
  }
}

}  // namespace

void addRunCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::vector<std::string> inputs, outputs, prints;
    bool time = false;
    int repeat = 1;
    std::string backend = "jit";
    bool progress = false;
    std::string checkpoint;
    std::string target;
    std::string floatingPoint;
  };
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand("run", "Compile a DSL file in-process and run it on tensor files");
  command->add_option("FILE", options->path, "DSL file (.tc)")->required();
  command->add_option("--in", options->inputs, "Bind an input: NAME=FILE (.mtx or .tns)");
  command->add_option("--out", options->outputs, "Write an output: NAME=FILE (.mtx or .tns)");
  command->add_option("--print", options->prints, "Print a tensor's stored entries (an output, or an input as read)");
  command->add_flag("--time", options->time, "Print compile time and the median kernel time");
  command->add_option("--repeat", options->repeat, "Run the kernels N times (median reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--backend", options->backend,
                      "jit: LLVM/Clang in-process; system: the system C++ compiler and dlopen")
      ->check(CLI::IsMember({"jit", "system"}))
      ->capture_default_str();
  command->add_flag("--progress", options->progress,
                    "Report a permanent's progress on stderr (default: only on a terminal, after 3 s)");
  command->add_option("--checkpoint", options->checkpoint,
                      "Save a permanent's completed chunks to FILE, and resume from it when it exists");
  command->add_option("--target", options->target,
                      "cpu or cuda (overrides the program's `target` line); cuda compiles with NVRTC and runs on "
                      "the GPU, timing kernels with CUDA events")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  addFloatingPointOption(command, options->floatingPoint);
  command->footer(
      "Under mpirun (-n K), a permanent's iterations are shared among the ranks; rank 0 prints the result and "
      "writes the one --checkpoint, which any rank count resumes. With --target cuda each rank runs on the GPU of "
      "its node-local rank (modulo the node's GPUs; TCC_CUDA_DEVICE=N, a list by local rank, or none overrides "
      "it), and a rank without a GPU runs the same chunks on the CPU.");
  command->callback([options] {
    Program program = Program::fromSyntax(loadComputationOrExit(options->path));
    // Under mpirun the ranks share each permanent, and rank 0 alone prints
    // and writes outputs. MPI starts once the inputs are read (for the cpu
    // target, once the kernels are compiled too; the cuda target first
    // needs the node-local rank, which picks the rank's GPU), and lives
    // until the error (if any) is printed.
    std::optional<rt::DistributedScope> ranks;
    auto speaks = [&] { return !ranks || ranks->isRoot(); };
    try {

      // Matrix Market files first: their headers size the symbols that
      // header-less .tns files then take.
      std::vector<std::pair<std::string, std::string>> bindings;
      for (const auto& binding : options->inputs) bindings.push_back(splitBinding(binding, "--in"));
      std::stable_partition(bindings.begin(), bindings.end(),
                            [](const auto& b) { return b.second.size() < 4 || b.second.substr(b.second.size() - 4) != ".tns"; });
      std::map<std::string, int32_t> symbolSizes;
      std::map<std::string, Tensor> inputs;
      for (const auto& [name, file] : bindings) {
        const TensorVar* declared = program.syntax().findTensor(name);
        if (!declared) throw Error("--in " + name + ": no tensor named " + name + " is declared in " + options->path);
        std::vector<int32_t> knownDims;
        for (const auto& dimension : declared->shape()) {
          int32_t size = dimension.isFixed() ? static_cast<int32_t>(dimension.size()) : 0;
          if (dimension.isSymbolic() && symbolSizes.count(dimension.symbol())) size = symbolSizes.at(dimension.symbol());
          knownDims.push_back(size);
        }
        Tensor tensor;
        try {
          tensor = readTensor(file, declared->format(), declared->datatype(), knownDims);
        } catch (const std::exception& error) {
          throw Error("tensor " + name + ": " + error.what());
        }
        for (int mode = 0; mode < declared->order(); ++mode)
          if (declared->dimension(mode).isSymbolic()) symbolSizes.emplace(declared->dimension(mode).symbol(), tensor.dims()[mode]);
        inputs[name] = std::move(tensor);
      }
      std::vector<std::pair<std::string, std::string>> writes;
      for (const auto& binding : options->outputs) writes.push_back(splitBinding(binding, "--out"));

      CompileOptions compileOptions;
      compileOptions.backend = options->backend == "system" ? jit::Backend::SystemCompiler : compileOptions.backend;
      if (!options->target.empty())
        compileOptions.target = options->target == "cuda" ? frontend::Target::Cuda : frontend::Target::Cpu;
      compileOptions.floatingPoint = floatingPointOption(options->floatingPoint);
      const auto& targetLine = program.syntax().target;
      if (compileOptions.target ? *compileOptions.target == frontend::Target::Cuda
                                : targetLine && targetLine->target == frontend::Target::Cuda) {
        if (rt::launchedByMpi()) ranks.emplace();
        compileOptions.target = placeOnRankDevice(program, compileOptions);
      }
      Kernel kernel = compile(program, compileOptions);
      RunOptions runOptions;
      runOptions.repeat = options->repeat;
      if (options->progress) runOptions.permanent.progress = rt::ProgressMode::On;
      runOptions.permanent.checkpointPath = options->checkpoint;
      if (rt::launchedByMpi() && !ranks) {
        ranks.emplace();
        placeOnRankDevice(program, compileOptions);  // the cpu target: no device
      }
      RunResult result = kernel.run(inputs, runOptions);
      if (!speaks()) return;

      std::set<std::string> described;  // a tensor several statements write, once
      for (const auto& statement : kernel.lowered().statements) {
        if (statement.temporary || !described.insert(statement.output.name()).second) continue;
        const std::string& name = statement.output.name();
        const Tensor& tensor = result.tensors.at(name);
        std::cout << name << ": " << tensor.describe();
        if (tensor.order() == 0) std::cout << " = " << std::setprecision(17) << tensor.valueAtPosition(0);
        std::cout << "\n";
      }
      if (options->time) {
        std::cout << "compile: " << formatDuration(kernel.compileSeconds()) << "; run: "
                  << formatDuration(median(result.seconds)) << " (median of " << options->repeat << ")\n";
        // Which of a default mapping's kernels the inputs called for.
        if (!result.gpuKernels.empty()) {
          std::cout << "GPU kernels launched:";
          for (const auto& launched : result.gpuKernels) std::cout << " " << launched;
          std::cout << "\n";
        }
      }
      // --print and --out name an output or an input (as read).
      auto named = [&](const std::string& option, const std::string& name) -> const Tensor& {
        if (auto found = result.tensors.find(name); found != result.tensors.end()) return found->second;
        if (auto found = inputs.find(name); found != inputs.end()) return found->second;
        throw Error(option + " " + name + ": no tensor named " + name);
      };
      for (const auto& name : options->prints) printEntries(name, named("--print", name));
      for (const auto& [name, file] : writes) writeTensor(file, named("--out", name));
    } catch (const frontend::DiagnosticError& error) {
      std::cerr << error.what();
      throw CLI::RuntimeError(kExitUserError);
    } catch (const CLI::RuntimeError&) {
      throw;
    } catch (const std::exception& error) {
      if (speaks()) std::cerr << "tcc: error: " << error.what() << "\n";
      throw CLI::RuntimeError(kExitUserError);
    }
  });
}

}  // namespace tcc::driver
