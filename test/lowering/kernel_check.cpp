#include "kernel_check.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tcc/ir/index_printer.h"
#include "tcc/test/reference.h"

namespace tcc::test {

rt::Coo randomSparse(std::vector<int32_t> dims, double density, uint64_t seed) {
  return rt::randomUniform(dims, density, seed);
}

rt::Coo randomDense(std::vector<int32_t> dims, uint64_t seed) { return rt::randomUniform(dims, 1.0, seed); }

std::string withSchedule(const std::string& program, const std::string& schedule) {
  return program + "schedule {\n" + schedule + "\n}\n";
}

std::string withScheduleIfAny(const std::string& program, const std::string& schedule) {
  return schedule.empty() ? program : withSchedule(program, schedule);
}

std::map<std::string, Tensor> outputsOf(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                        const CompileOptions& options) {
  Program program = Program::fromText(dsl, "test.tc");
  std::map<std::string, Tensor> bound;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
  }
  return compile(program, options).run(bound);
}

std::optional<std::string> codeMatchingReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs) {
  try {
    return expectProgramMatchesReference(dsl, inputs);
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what();
    return std::nullopt;
  }
}

int forEachCodeMatchingReference(const std::string& dsl, const std::vector<NamedInputs>& inputSets,
                                 const std::function<void(const std::string& code)>& onCode) {
  for (const auto& inputs : inputSets) {
    SCOPED_TRACE(inputs.name + "\n" + dsl);
    if (auto code = codeMatchingReference(dsl, declaredInputs(dsl, inputs.tensors))) onCode(*code);
  }
  return static_cast<int>(inputSets.size());
}

void expectRefusedAtLastCommand(const std::string& program, const std::string& schedule, const std::string& message) {
  std::string dsl = withSchedule(program, schedule);
  SCOPED_TRACE(dsl);
  frontend::Diagnostic refusal = refusalOf(dsl);
  std::string command = schedule.substr(schedule.rfind('\n') + 1);
  int line = static_cast<int>(std::count(dsl.begin(), dsl.end(), '\n')) - 1;
  EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", line, 1})) << refusal.format();
  EXPECT_EQ(refusal.message.rfind(command + ": " + message, 0), 0u) << refusal.message;
}

NamedInputs inputsOverAB(const std::string& name, rt::Coo a, rt::Coo b, uint64_t seed) {
  int32_t n = a.dims[0], m = a.dims[1];
  return NamedInputs{name,
                     {{"A", std::move(a)}, {"B", std::move(b)}, {"C", randomSparse({n, m}, 0.3, seed)},
                      {"x", randomDense({m}, seed + 1)}, {"z", randomDense({m}, seed + 2)},
                      {"D", randomDense({n, m}, seed + 3)}}};
}

rt::Coo transposed(const rt::Coo& matrix) {
  rt::Coo result = matrix;
  std::swap(result.dims[0], result.dims[1]);
  std::swap(result.coords[0], result.coords[1]);
  return result;
}

std::string programOverAB(const std::string& formatA, const std::string& formatB, const std::string& declarations,
                          const std::string& text, const std::string& schedule) {
  return withSchedule("tensor A(I, K) : " + formatA + "\ntensor B(I, K) : " + formatB + "\n" + declarations + text + "\n",
                      schedule);
}

std::map<std::string, rt::Coo> declaredInputs(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs) {
  std::map<std::string, rt::Coo> used;
  for (const auto& [name, coo] : inputs)
    if (contains(dsl, "tensor " + name + "(")) used.emplace(name, coo);
  return used;
}

std::string runError(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs) {
  try {
    Kernel kernel = compile(Program::fromText(dsl, "test.tc"));
    std::map<std::string, Tensor> tensors;
    for (const auto& [name, coo] : inputs)
      tensors.emplace(name, rt::pack(coo, toRuntimeFormat(kernel.program().syntax().findTensor(name)->format())));
    kernel.run(tensors);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

std::string errorOf(const std::string& dsl) {
  try {
    compile(Program::fromText(dsl, "test.tc"));
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

std::string concreteOf(const std::string& dsl) {
  return ir::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements.at(0).concrete);
}

std::string replaced(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

frontend::Diagnostic refusalOf(const std::string& dsl) {
  try {
    compile(Program::fromText(dsl, "test.tc"));
  } catch (const frontend::DiagnosticError& error) {
    if (error.diagnostics().size() == 1) return error.diagnostics()[0];
  }
  return {};
}

std::string decisionsOf(const std::string& dsl) {
  std::string text;
  for (const auto& statement : lowerProgram(Program::fromText(dsl, "test.tc")).statements)
    for (const auto& decision : statement.decisions) text += decision + "\n";
  return text;
}

namespace {

// Sets the thread count of the OpenMP runtime the kernels run on (loaded
// with the first OpenMP kernel): whichever of the runtimes is loaded.
// Returns how many runtimes took it.
int setKernelThreads(int threads) {
  int set = 0;
  for (const char* name : {"libomp.so.5", "libomp.so", "libgomp.so.1"}) {
    void* runtime = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (!runtime) continue;
    auto setThreads = reinterpret_cast<void (*)(int)>(dlsym(runtime, "omp_set_num_threads"));
    auto maxThreads = reinterpret_cast<int (*)()>(dlsym(runtime, "omp_get_max_threads"));
    if (setThreads && maxThreads) {
      setThreads(threads);
      if (maxThreads() == threads) ++set;
    }
    dlclose(runtime);
  }
  return set;
}

}  // namespace

std::string expectEachThreadCountMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                                  const std::vector<int>& threadCounts) {
  Program program = Program::fromText(dsl, "test.tc");
  Kernel kernel = compile(program);
  std::map<std::string, Tensor> bound;
  std::map<std::string, DenseArray> dense;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    if (!declared) continue;
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
    DenseArray array;
    array.dims.assign(coo.dims.begin(), coo.dims.end());
    array.values = rt::toDense(coo);
    dense.emplace(name, std::move(array));
  }
  auto expected = evaluate(program.statements(), dense);
  for (int threads : threadCounts) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_GE(setKernelThreads(threads), 1) << "no OpenMP runtime took the thread count";
    expectOutputsMatch(kernel.run(bound), expected, 1e-10);
  }
  setKernelThreads(2);
  if (::testing::Test::HasFailure()) ADD_FAILURE() << "generated code:\n" << kernel.source();
  return kernel.source();
}

rt::Coo realMatrix(const std::string& name) {
  return rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name);
}

namespace {
std::string checkProgram(const Program& program, const std::map<std::string, rt::Coo>& inputs, double relativeTolerance,
                         const CompileOptions& options = {});
}  // namespace

void expectSameBits(const std::map<std::string, Tensor>& actual, const std::map<std::string, Tensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, tensor] : expected) {
    std::vector<double> a = rt::toDense(actual.at(name)), e = rt::toDense(tensor);
    ASSERT_EQ(a.size(), e.size());
    size_t differing = 0;
    for (size_t k = 0; k < a.size(); ++k) differing += std::memcmp(&a[k], &e[k], sizeof(double)) != 0;
    EXPECT_EQ(differing, 0u) << name << ": " << differing << " of " << a.size() << " entries differ in their bits";
    EXPECT_TRUE(std::any_of(e.begin(), e.end(), [](double v) { return v != 0; }))
        << name << " is all zeros: the comparison shows nothing";
  }
}

void expectOutputsMatch(const std::map<std::string, Tensor>& outputs,
                        const std::map<std::string, DenseArray>& expected, double relativeTolerance) {
  for (const auto& [name, tensor] : outputs) {
    SCOPED_TRACE("output " + name + " (" + tensor.describe() + ")");
    EXPECT_NO_THROW(tensor.validate());
    const DenseArray& reference = expected.at(name);
    std::vector<double> actual = rt::toDense(tensor);
    if (actual.size() != reference.values.size()) {
      ADD_FAILURE() << "size " << actual.size() << " vs reference " << reference.values.size();
      continue;
    }
    double scale = 0;
    for (double v : reference.values) scale = std::max(scale, std::abs(v));
    const double tolerance = relativeTolerance * std::max(1.0, scale);
    int mismatches = 0;
    for (size_t k = 0; k < actual.size() && mismatches < 5; ++k)
      if (std::abs(actual[k] - reference.values[k]) > tolerance) {
        ++mismatches;
        ADD_FAILURE() << "entry " << k << ": got " << actual[k] << ", reference " << reference.values[k];
      }
  }
}

std::string expectMatchesReference(const KernelCheck& check) {
  return checkProgram(Program::fromStatements(check.statements, check.tensors, check.schedule), check.inputs,
                      check.relativeTolerance);
}

std::string expectProgramMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs) {
  return checkProgram(Program::fromText(dsl, "test.tc"), inputs, 1e-10);
}

std::string expectProgramMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                          const CompileOptions& options, double relativeTolerance) {
  return checkProgram(Program::fromText(dsl, "test.tc"), inputs, relativeTolerance, options);
}

namespace {
std::string checkProgram(const Program& program, const std::map<std::string, rt::Coo>& inputs, double relativeTolerance,
                         const CompileOptions& options) {
  Kernel kernel = compile(program, options);

  std::map<std::string, Tensor> bound;
  std::map<std::string, DenseArray> dense;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    if (!declared) {
      ADD_FAILURE() << "no tensor " << name;
      return "";
    }
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
    DenseArray array;
    array.dims.assign(coo.dims.begin(), coo.dims.end());
    array.values = rt::toDense(coo);
    dense.emplace(name, std::move(array));
  }
  auto outputs = kernel.run(bound);
  auto expected = evaluate(program.statements(), dense);

  expectOutputsMatch(outputs, expected, relativeTolerance);
  if (::testing::Test::HasFailure()) {
    std::string text;
    for (const auto& statement : kernel.lowered().statements) text += ir::toString(statement.concrete) + "\n";
    ADD_FAILURE() << "concrete index notation:\n" << text << "\ngenerated code:\n" << kernel.source();
  }
  return kernel.source();
}
}  // namespace

}  // namespace tcc::test
