#include "checker.h"

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <typeinfo>

#include "tcc/frontend/diagnostic.h"
#include "tcc/lowering/lower.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/pack.h"

namespace tcc::differential {
namespace {

std::string typeName(const std::exception& error) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(typeid(error).name(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && name ? name.get() : typeid(error).name();
}

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

Verdict refused(const std::string& reason) {
  if (reason.empty() || reason.find("internal") != std::string::npos)
    return {Outcome::Internal, "refused without a usable reason: " + reason, "internal: refusal"};
  return {Outcome::Refused, firstLine(reason), "refused"};
}

Verdict internal(const std::string& what, const std::string& kind) {
  return {Outcome::Internal, kind + ": " + what, "internal: " + kind};
}

std::string coordinateText(const std::vector<int64_t>& dims, size_t linear) {
  std::vector<int64_t> coordinate(dims.size());
  for (size_t m = dims.size(); m-- > 0;) {
    coordinate[m] = static_cast<int64_t>(linear % static_cast<size_t>(dims[m]));
    linear /= static_cast<size_t>(dims[m]);
  }
  std::string text = "(";
  for (size_t m = 0; m < coordinate.size(); ++m) text.append(m ? "," : "").append(std::to_string(coordinate[m]));
  return text + ")";
}

// Every output against one oracle's answer; "" when all agree.
std::string compareOutputs(const Program& program, const std::map<std::string, Tensor>& outputs,
                           const Outputs& expected, const std::string& oracle) {
  std::ostringstream report;
  report.precision(17);
  for (const auto& [name, reference] : expected) {
    auto found = outputs.find(name);
    if (found == outputs.end()) {
      report << "output " << name << " missing; ";
      continue;
    }
    try {
      found->second.validate();
    } catch (const std::exception& error) {
      report << "output " << name << " has invalid storage: " << firstLine(error.what()) << "; ";
      continue;
    }
    std::vector<double> actual = rt::toDense(found->second);
    if (actual.size() != reference.values.size()) {
      report << "output " << name << " holds " << actual.size() << " values, " << oracle << " "
             << reference.values.size() << "; ";
      continue;
    }
    double scale = 1;
    for (double v : reference.values) scale = std::max(scale, std::abs(v));
    double tolerance = relativeTolerance(program.syntax().findTensor(name)->datatype()) * scale;
    int shown = 0;
    for (size_t k = 0; k < actual.size(); ++k) {
      bool bad = std::isnan(actual[k]) != std::isnan(reference.values[k]) ||
                 std::abs(actual[k] - reference.values[k]) > tolerance;
      if (!bad) continue;
      if (shown++ < 3)
        report << name << coordinateText(reference.dims, k) << " = " << actual[k] << ", " << oracle << " "
               << reference.values[k] << "; ";
    }
    if (shown > 3) report << "(" << shown << " entries of " << name << " differ) ";
  }
  return report.str();
}

// NVRTC's complaint: the log's first error line (the first line of the
// exception says only that the kernels did not compile).
Verdict cudaError(const rt::cuda::CudaError& error) {
  std::string text = error.what();
  if (text.rfind("NVRTC could not compile", 0) != 0) return internal(firstLine(text), "CUDA");
  std::string shown = firstLine(text);
  size_t at = text.find("error");
  if (at != std::string::npos) {
    size_t start = text.rfind('\n', at);
    shown = firstLine(text.substr(start == std::string::npos ? 0 : start + 1));
  }
  return internal(shown, "generated CUDA does not compile");
}

// The cuda target without a GPU: lowering (where it refuses) and NVRTC
// (where the kernels it printed do not compile) are still checked.
Verdict compileForCuda(const Lowered& lowered) {
  if (!rt::cuda::builtWithCuda())
    return {Outcome::CompiledNotRun, "lowered only: built without the CUDA toolkit (NVRTC)", "compiled"};
  // (--fmad as the runtime sets it: off under fp strict unless an
  // intrinsic's kernels are there.)
  bool intrinsics = false;
  for (const auto& function : lowered.gpuFunctions) intrinsics = intrinsics || !function.intrinsics.empty();
  rt::cuda::compileToCubin(lowered.cudaKernels, "sm_90", "case.cu",
                           lowered.floatingPoint == frontend::FloatingPointMode::Fast || intrinsics);
  return {Outcome::CompiledNotRun, "", "compiled"};
}

}  // namespace

std::string toString(Outcome outcome) {
  switch (outcome) {
    case Outcome::Matched: return "matched";
    case Outcome::Refused: return "refused";
    case Outcome::Mismatch: return "MISMATCH";
    case Outcome::Internal: return "INTERNAL";
    case Outcome::Crash: return "CRASH";
    case Outcome::InvalidCase: return "invalid case";
    case Outcome::CompiledNotRun: return "compiled, not run";
  }
  return "?";
}

double relativeTolerance(ir::Datatype type) {
  switch (type) {
    case ir::Datatype::Float64: return 1e-9;
    case ir::Datatype::Float32: return 2e-4;
    case ir::Datatype::Float16: return 2e-2;
    default: return 0;
  }
}

Verdict checkProgram(const std::string& programText, const std::map<std::string, rt::Coo>& inputs,
                     const std::vector<const Oracle*>& oracles, bool compileOnly) {
  std::optional<Program> program;
  std::optional<Kernel> kernel;
  try {
    program = Program::fromText(programText, "case.tc");
    CompileOptions options;
    options.useKernelCache = false;
    const auto& target = program->syntax().target;
    if (target && target->target == frontend::Target::Cuda) {
      // Lowered first, so that a refused case never opens the driver (a
      // context per isolated case costs more than the case).
      Lowered lowered = lowerProgram(*program, options);
      if (compileOnly || rt::cuda::deviceCount() == 0) return compileForCuda(lowered);
    }
    kernel = compile(*program, options);
  } catch (const rt::cuda::CudaError& error) {
    return cudaError(error);
  } catch (const frontend::DiagnosticError& error) {
    return refused(error.what());
  } catch (const Error& error) {
    // Every refusal of a DSL program points into it (file:line:col).
    return internal(firstLine(error.what()), "refused without a source location");
  } catch (const lowering::LoweringError& error) {
    return internal(firstLine(error.what()), "refused without a source location");
  } catch (const jit::CompileError& error) {
    return internal(firstLine(error.what()), "generated code does not compile");
  } catch (const std::exception& error) {
    return internal(firstLine(error.what()), typeName(error));
  } catch (...) {
    return internal("", "non-standard exception");
  }

  std::map<std::string, Tensor> bound;
  try {
    for (const auto& [name, coo] : inputs) {
      const TensorVar* declared = program->syntax().findTensor(name);
      if (!declared) return {Outcome::InvalidCase, "no tensor " + name, "invalid"};
      bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
    }
  } catch (const std::exception& error) {
    return {Outcome::InvalidCase, "inputs do not fit their formats: " + firstLine(error.what()), "invalid"};
  }

  std::map<std::string, Tensor> outputs;
  try {
    outputs = kernel->run(bound);
  } catch (const Error& error) {
    // A kernel's nonzero status and storage it broke are the compiler's
    // failures, not reasons to refuse the program.
    std::string what = error.what();
    if (what.find("failed with status") != std::string::npos || what.find("compiler bug") != std::string::npos)
      return internal(firstLine(what), "kernel failed");
    return refused(what);
  } catch (const rt::cuda::CudaError& error) {
    return internal(firstLine(error.what()), "while running on the GPU");
  } catch (const std::exception& error) {
    return internal(firstLine(error.what()), "while running: " + typeName(error));
  }

  bool zeroResult = false;
  std::vector<std::string> checkedBy;
  for (const Oracle* oracle : oracles) {
    std::optional<Outputs> expected;
    try {
      expected = oracle->evaluate(*program, inputs);
    } catch (const std::exception& error) {
      return {Outcome::InvalidCase, oracle->name() + " cannot evaluate: " + firstLine(error.what()), "invalid"};
    }
    if (!expected) continue;
    checkedBy.push_back(oracle->name());
    zeroResult = true;
    for (const auto& [name, array] : *expected)
      for (double v : array.values) zeroResult = zeroResult && v == 0;
    std::string differences = compareOutputs(*program, outputs, *expected, oracle->name());
    if (!differences.empty()) return {Outcome::Mismatch, differences, "mismatch: " + oracle->name()};
  }
  Verdict matched{Outcome::Matched, "", "matched"};
  matched.zeroResult = zeroResult;
  matched.checkedBy = std::move(checkedBy);
  return matched;
}

}  // namespace tcc::differential
