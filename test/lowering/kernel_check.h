// Compiles statements with the whole pipeline, runs them on the given
// inputs and compares every output with the dense reference evaluator.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tcc/frontend/diagnostic.h"
#include "tcc/runtime/coo.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {

struct KernelCheck {
  std::vector<ir::IndexStmt> statements;
  std::vector<TensorVar> tensors;           // declaration order
  std::map<std::string, rt::Coo> inputs;  // by tensor name
  Schedule schedule;
  double relativeTolerance = 1e-10;
};

// Returns the generated C++ (for tests that look at it); fails the current
// test with a readable message on any mismatch.
// Each output against the reference's array of the same name, entry by
// entry within relativeTolerance of the reference's largest magnitude (at
// least 1); the output's storage validated.
void expectOutputsMatch(const std::map<std::string, Tensor>& outputs,
                        const std::map<std::string, DenseArray>& expected, double relativeTolerance);
std::string expectMatchesReference(const KernelCheck& check);
// Each output of `actual` holds the same bits as `expected`'s of the same
// name, entry by entry; an all-zero expected output fails (it would show
// nothing).
void expectSameBits(const std::map<std::string, Tensor>& actual, const std::map<std::string, Tensor>& expected);
// Same for a DSL program (with its schedule); inputs by tensor name.
std::string expectProgramMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs);
// Same, compiled with `options` and compared within `relativeTolerance`.
std::string expectProgramMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                          const CompileOptions& options, double relativeTolerance);

// Same, with what compiling throws (a refusal) recorded as a failure of
// the test: the printed code, or nullopt.
std::optional<std::string> codeMatchingReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs);

// `program` followed by `schedule { <schedule> }`.
std::string withSchedule(const std::string& program, const std::string& schedule);
// The same, or `program` as it is when `schedule` is empty.
std::string withScheduleIfAny(const std::string& program, const std::string& schedule);

// A named program and the inputs it runs on (by tensor name), for the
// tests over lists of statements; a test's own fields go in a struct
// derived from it.
struct ProgramCase {
  std::string name;
  std::string program;
  std::map<std::string, rt::Coo> inputs;
};
// A parameterized test's case is printed as its name.
inline void PrintTo(const ProgramCase& c, std::ostream* out) { *out << c.name; }
// Every output of the DSL program compiled with `options` and run on
// `inputs`, each packed in the format and element type the program declares.
std::map<std::string, Tensor> outputsOf(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                        const CompileOptions& options = {});
// The program of the pos tests over two sparse operands: A(I, K) and
// B(I, K) stored as `formatA` and `formatB`, then `declarations`, the
// statement `text` and `schedule`.
std::string programOverAB(const std::string& formatA, const std::string& formatB, const std::string& declarations,
                          const std::string& text, const std::string& schedule);
// Those of `inputs` that the DSL text declares (`tensor NAME(`).
std::map<std::string, rt::Coo> declaredInputs(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs);
// What compiling the DSL text (named test.tc) throws, or "" when it compiles.
std::string errorOf(const std::string& dsl);
// The concrete index notation of the DSL text's first statement, as lowered.
std::string concreteOf(const std::string& dsl);
// `text` with every `key` replaced by `value`.
std::string replaced(std::string text, const std::string& key, const std::string& value);
// What running the compiled program on these inputs throws; "" if it runs.
std::string runError(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs);
// The one located diagnostic compiling the DSL text (named test.tc) is
// refused with, or an empty one where it compiles.
frontend::Diagnostic refusalOf(const std::string& dsl);
// Expects `program` with `schedule` (withSchedule) to be refused at the
// schedule's last command, with a message that starts with that command,
// ": " and `message`.
void expectRefusedAtLastCommand(const std::string& program, const std::string& schedule, const std::string& message);
// The decisions `tcc explain` prints for the DSL text, one per line.
std::string decisionsOf(const std::string& dsl);

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A seeded random sparse tensor with values in [-1, 1] \ {0}.
rt::Coo randomSparse(std::vector<int32_t> dims, double density, uint64_t seed);
rt::Coo randomDense(std::vector<int32_t> dims, uint64_t seed);
// Named inputs of the tests over two sparse operands A and B (the pos-union
// and sparse-rows tests): A and B as given, and from `seed` C sparse of
// their shape, x and z dense over their columns, D dense of their shape.
struct NamedInputs {
  std::string name;
  std::map<std::string, rt::Coo> tensors;
};
NamedInputs inputsOverAB(const std::string& name, rt::Coo a, rt::Coo b, uint64_t seed);
// codeMatchingReference for the DSL program on each input set (the tensors
// it declares, the set's name traced), `onCode` called with the printed
// code of each run that compiled. Returns how many sets were checked.
int forEachCodeMatchingReference(const std::string& dsl, const std::vector<NamedInputs>& inputSets,
                                 const std::function<void(const std::string& code)>& onCode);

// Compiles `dsl` once and runs it on `inputs` at each of `threadCounts`
// (the OpenMP runtime's thread count, set before each run), each output
// against the dense reference. Returns the generated code.
std::string expectEachThreadCountMatchesReference(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                                                  const std::vector<int>& threadCounts);

// The matrix with its two modes swapped.
rt::Coo transposed(const rt::Coo& matrix);
// A real matrix from the shared data folder.
rt::Coo realMatrix(const std::string& name);

}  // namespace tcc::test
