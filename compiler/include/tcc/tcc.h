// tcc as a library: compile tensor algebra from DSL text, a file, or the C++
// builder, bind tensors by name, run, read the outputs.
//
//   auto kernel = tcc::compile(tcc::Program::fromFile("spgemm.tc"));
//   tcc::Tensor B = tcc::readMatrixMarket("b.mtx", tcc::Format::csr());
//   auto outputs = kernel.run({{"B", B}, {"C", C}});
//   const tcc::Tensor& A = outputs.at("A");
//
// Errors are exceptions: tcc::frontend::DiagnosticError for DSL mistakes
// and for what a DSL program asks that tcc cannot compile (each diagnostic
// carries file:line:col: the schedule command responsible, else the
// statement), tcc::Error for everything else (shapes, formats; a program
// from the C++ builder that cannot be compiled), tcc::jit::CompileError
// when the generated code does not compile.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/frontend/program.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/permanent.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/tensor.h"
#include "tcc/schedule.h"

namespace tcc::rt::cuda {
class Module;
}

namespace tcc {

using ir::Format;
using ir::IndexVar;
using ir::TensorVar;
using rt::Tensor;

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A checked program: declared tensors and statements in tensor index notation.
class Program {
 public:
  static Program fromFile(const std::string& path);
  static Program fromText(const std::string& text, const std::string& name = "<input>");
  // From an already parsed and checked file.
  static Program fromSyntax(frontend::Program syntax);
  // From the C++ builder: statements in order; `tensors` fixes the order in
  // which they are declared (every tensor the statements use must be listed).
  static Program fromStatements(std::vector<ir::IndexStmt> statements, std::vector<TensorVar> tensors);
  // The same with a schedule (see tcc/schedule.h); throws Error for a
  // command that names an unknown variable or a non-positive factor.
  static Program fromStatements(std::vector<ir::IndexStmt> statements, std::vector<TensorVar> tensors,
                                const Schedule& schedule);

  const frontend::Program& syntax() const { return program_; }
  const std::vector<TensorVar>& tensors() const { return program_.tensors; }
  const std::vector<ir::IndexStmt>& statements() const { return program_.statements; }

 private:
  frontend::Program program_;
};

struct CompileOptions {
  jit::Backend backend = jit::isAvailable(jit::Backend::ClangInterpreter) ? jit::Backend::ClangInterpreter
                                                                         : jit::Backend::SystemCompiler;
  std::string functionPrefix = "tcc_kernel";
  // Reuse machine code compiled before, in this process or (through the
  // disk cache, see tcc/jit/kernel_cache.h) in an earlier one.
  bool useKernelCache = true;
  // Cpu or Cuda; unset: the program's `target` line, else the CPU.
  std::optional<frontend::Target> target;
  // Cuda: the GPU architecture (sm_90); empty: the program's, else the
  // device's when running (sm_90 when only emitting code).
  std::string cudaArchitecture;
  // Cpu: how generated code may evaluate floating point (see
  // frontend::FloatingPointMode); unset: the program's `fp` line, else
  // Strict. Strict is the default because it gives the same bits on every
  // backend and every run; Fast trades that for FMA and vectorized sums.
  std::optional<frontend::FloatingPointMode> floatingPoint;
  // Cpu: rows of a sparse output that a parallel loop assembles go in one
  // pass where the inputs bound its entries (chunks of rows appended by
  // each thread, then copied to their offsets), else in two (each row
  // counted, a prefix sum, then filled). False: always in two, the form
  // before the one-pass one (for comparisons; see bench/sparse_add).
  bool rowsInOnePass = true;
  // Cpu: a sum nested in the expression (a scalar temporary) is computed
  // once before a loop whose variable it does not read, and once per
  // iteration before the lattice cases that would each compute it alike;
  // the same additions in the same order, fewer copies of its loops in the
  // kernel. False: in every lattice case, the form before (for
  // comparisons; see bench/compile_latency).
  bool hoistNestedSums = true;
  // Cpu: a co-iteration of sparse operands whose lattice cases hold loops
  // (the variables inside, a nested sum's) is one while-loop over all the
  // operands, an exhausted one at a coordinate past the others, so each
  // case's loops are printed once; innermost co-iterations keep one loop
  // per lattice point. False: one loop per lattice point everywhere, the
  // form before (for comparisons; see bench/compile_latency).
  bool oneMergeLoop = true;
  // Cpu: such a merged loop (of up to 6 operands and 4 lattice cases or
  // more) picks its case by one switch on which operands are at the
  // coordinate, so the cases of operands that ran out cost nothing. False:
  // the cases tested in turn, the form before (for comparisons; see
  // bench/compile_latency).
  bool mergeLoopSwitch = true;
  // Cuda: the counts of a sparse output that GPU loops assemble (each
  // row's or coordinate's) become offsets through a parallel scan over
  // the GPU's threads. False: on one GPU thread, the form before (for
  // comparisons; see bench/cuda).
  bool gpuParallelPrefixSums = true;
  // Cuda: in a loop jammed by unroll (SpMM's column tiles), the sums of a
  // copy that may be dead (columns past N) are updated unguarded, their
  // loads at a live copy's index, so the device compiler can issue several
  // nonzeros' loads ahead. Off by default: on the H200 it lost to each
  // copy's statements under its own `if` (cuSPARSE / tcc geomean 0.96
  // against 1.08 over 39 SpMM cases, bench/cuda/RESULTS.md round 65).
  bool gpuSpeculativeJamLoads = false;
  // Cpu: arrays the kernel allocates itself (a sparse output's pos, crd
  // and vals, workspaces, a sparse workspace's output) of 4 MB and more go
  // to 2 MB pages advised MADV_HUGEPAGE (tcc/runtime/array_alloc.h). Unset:
  // as the runtime's own arrays, on unless rt::setHugePageMinBytes(0) or
  // TCC_HUGE_PAGES=0 turned them off.
  std::optional<bool> hugePages;
};
// Whether a kernel compiled with `options` allocates in 2 MB pages.
bool hugePages(const CompileOptions& options);

// What compilation made of one statement.
struct CompiledStatement {
  // The index notation computed: the program's statement, or (cuda) a sum
  // split out of it into a scalar tcc names (see `temporary`).
  ir::IndexStmt statement;
  size_t programStatement = 0;           // which of the program's statements
  // The output is a scalar tcc named for a sum of the program's statement
  // (one statement of its own, its result in device memory): read by the
  // statement's last part, never returned as an output.
  bool temporary = false;
  ir::IndexStmt concrete;                // concrete index notation
  std::vector<std::string> decisions;    // loop order and workspace reasons
  ir::imp::Function function;            // imperative IR
  std::vector<TensorVar> parameters;     // in entry-point order
  TensorVar output;                      // as declared
  TensorVar computedOutput;              // as the kernel assembles it
  // A statement that reads its output (`y(i) += ...`, `y(i) = A(i,j) *
  // y(j)`) reads the output's values from before it as this tensor (a
  // parameter, bound to the output's storage as the statement starts);
  // undefined where the statement does not.
  TensorVar priorValues;
  // Inputs the kernel reads from a copy in another storage order (the
  // sparse inputs' orders disagreed): input name -> the copy's variable.
  std::vector<std::pair<std::string, TensorVar>> convertedInputs;
};

// Lowering without running: CIN, imperative IR and C++ for every statement.
struct Lowered {
  std::vector<CompiledStatement> statements;
  frontend::Target target = frontend::Target::Cpu;
  frontend::FloatingPointMode floatingPoint = frontend::FloatingPointMode::Strict;
  std::string cpp;  // Cpu: one self-contained translation unit
  // Cuda: per statement, its kernels and the host part that launches them;
  // a .cu unit nvcc compiles alone; and the kernels alone, for NVRTC.
  std::vector<lowering::GpuFunction> gpuFunctions;
  std::string cuda, cudaKernels;
  const std::string& source() const { return target == frontend::Target::Cuda ? cuda : cpp; }
};
Lowered lowerProgram(const Program& program, const CompileOptions& options = {});

struct RunOptions {
  int repeat = 1;  // the kernels run this many times; outputs are from the last run
  // Progress, checkpoint and threads of permanents (p = perm(A)).
  rt::PermanentOptions permanent;
};

struct RunResult {
  std::map<std::string, Tensor> tensors;  // each statement's output (inputs are not copied back)
  std::vector<double> seconds;            // kernel time of each run (all statements)
  // Cuda: the GPU kernels the last run launched, in order (a default
  // mapping with two kernels launches the one the inputs' rows call for).
  std::vector<std::string> gpuKernels;
};

class Kernel {
 public:
  // Binds inputs by name (converted to the declared format and element
  // type when they differ), checks shapes and that each input keeps its
  // format's promises (Tensor::validate: well-formed storage, no repeats
  // in unique levels, no disorder in ordered ones; O(stored entries)), runs
  // every statement in order and returns the outputs in their declared
  // formats. Throws tcc::Error naming the tensor, the level and the first
  // offending position.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
  RunResult run(const std::map<std::string, Tensor>& inputs, const RunOptions& options) const;

  const Lowered& lowered() const { return lowered_; }
  // Cpu: statement's compiled entry point, for callers that bind the
  // tensors' ABI views themselves (a benchmark timing the kernel alone):
  // parameters in CompiledStatement::parameters order, outputs allocated by
  // the caller; returns 0 on success. No conversion or checks happen.
  using EntryPoint = int32_t (*)(tcc_tensor**);
  EntryPoint entryPoint(size_t statement) const;
  const std::string& source() const { return lowered_.source(); }
  const Program& program() const { return program_; }
  double compileSeconds() const { return compileSeconds_; }

 private:
  friend Kernel compile(const Program&, const CompileOptions&);
  Program program_;
  Lowered lowered_;
  std::shared_ptr<const jit::Module> module_;
  std::vector<void*> entryPoints_;
  std::shared_ptr<const rt::cuda::Module> cudaModule_;  // Cuda target
  double compileSeconds_ = 0;
};

Kernel compile(const Program& program, const CompileOptions& options = {});

// For one of several MPI ranks (a live rt::DistributedScope): picks this
// rank's device for the target `options` and `program` name, before
// anything uses the GPU, and tells the node's ranks (a collective: with a
// scope open, every rank calls it once, before compiling). For the cuda
// target it selects rt::deviceForRank's device (the node-local rank modulo
// the device count, or TCC_CUDA_DEVICE) and returns Cuda; a rank of a run
// with several that gets no device returns Cpu: compiled for the CPU, its
// permanents then sum the GPU kernel's chunks with the OpenMP CPU kernel.
// Without a scope: Cuda with TCC_CUDA_DEVICE's device selected, or the
// target as it is. Throws Error for a bad TCC_CUDA_DEVICE.
frontend::Target placeOnRankDevice(const Program& program, const CompileOptions& options = {});

// Conversions between the compiler's formats and the runtime's.
rt::TensorFormat toRuntimeFormat(const Format& format);
rt::ValueType toRuntimeType(ir::Datatype type);

// Reads a Matrix Market (.mtx) or FROSTT (.tns) file into `format`.
Tensor readTensor(const std::string& path, const Format& format, ir::Datatype type = ir::Datatype::Float64,
                  std::vector<int32_t> knownDims = {});
Tensor readMatrixMarket(const std::string& path, const Format& format);
// Writes .mtx (order 2) or .tns (any order) by the file's extension.
void writeTensor(const std::string& path, const Tensor& tensor);

}  // namespace tcc
