// Lowering: concrete index notation -> one imperative IR function.
//
// The lowerer walks the CIN top-down. Each forall becomes a loop chosen from
// the merge lattice of the iterators over its index variable (a plain for
// loop over one compressed level or a dense range, or while-loops that
// co-iterate several sparse levels); where-statements become dense
// workspaces (allocated once, reset through their list of touched
// coordinates); assignments become loads and stores. Sparse outputs are
// assembled while computing: each compressed output level appends its
// coordinates in order, with amortised growth.
//
// Assumes: the statement is concrete and its loop order visits every
// sparse tensor's levels in storage order (concretizeForLowering makes
// sure of both); dense outputs arrive allocated and zeroed by the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::lowering {

class LoweringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A loop that cannot run as its parallelize asks: the loop's variable (a
// split, fuse, ... may have derived it from the command's), its unit and
// race strategy; the message names them as parallelize(v, unit, strategy).
class ParallelizeError : public LoweringError {
 public:
  ParallelizeError(const ir::IndexVar& loop, ir::ParallelUnit unit, ir::OutputRaceStrategy strategy,
                   const std::string& message)
      : LoweringError(message), loop_(loop), unit_(unit), strategy_(strategy) {}
  const ir::IndexVar& loop() const { return loop_; }
  ir::ParallelUnit unit() const { return unit_; }
  ir::OutputRaceStrategy strategy() const { return strategy_; }

 private:
  ir::IndexVar loop_;
  ir::ParallelUnit unit_;
  ir::OutputRaceStrategy strategy_;
};

// A sparse output level the loops would append out of order. `command`:
// the schedule command that made the order ("split(i, i0, i1, 2)"),
// which starts the message; empty where plain loops made it (the caller
// knows which command kept a workspace out: see
// ConcretizedStatement::outputOrderCommand).
class OutputOrderError : public LoweringError {
 public:
  OutputOrderError(const std::string& command, const std::string& reason)
      : LoweringError(command.empty() ? reason : command + ": " + reason), command_(command), reason_(reason) {}
  const std::string& command() const { return command_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string command_, reason_;
};

// What a kernel returns when a bound(...) of its schedule does not hold for
// the tensors it was given; 0 means success.
inline constexpr int kBrokenBoundStatus = 3;
// What a kernel returns when a sparse workspace fails (out of memory, say);
// tcc_ism_kernel_last_error() says why.
inline constexpr int kSparseWorkspaceStatus = 5;

// How a sparse workspace accumulates (the ISM's policies, ism/).
// User: a policy the program registered (tcc/ism/policy_registry.h),
// named by SparseWorkspaceOptions::userPolicy.
enum class WorkspacePolicy { Bucket, Hash, Coord, Map, Vector, User };
const char* toString(WorkspacePolicy policy);

struct SparseWorkspaceOptions {
  WorkspacePolicy policy = WorkspacePolicy::Hash;
  bool pipelining = false;       // sort and merge on a second thread
  bool doubleBuffering = false;  // two all arrays, no temporary per merge
  int64_t capacity = 0;          // first accumulation capacity; 0: the ISM's default
  // Per-thread workspaces whose threads own disjoint ranges of the first
  // output level: the thread loop becomes a parallel loop over ranges of
  // that level's variable (the loop right below it), each range walking the
  // whole nest but only its own coordinates (a binary search per compressed
  // segment). No coordinate is then inserted by two threads, so the threads'
  // runs hold the output once between them and their merge only copies.
  // Set by sparse-workspace insertion, which states the rule.
  bool ownerPartition = false;
  std::string userPolicy;        // User only: the registered name
  int userPolicyId = -1;         // User only: its id (tcc_ism_kernel_policy_id)
};

struct LowerOptions {
  std::string functionName = "compute";
  // Assemble sparse outputs in a pass of their own (pos and crd only), then
  // compute the values into arrays of the exact size, instead of assembling
  // while computing.
  bool separateAssembly = false;
  // Rows a parallel loop assembles go in one pass where that applies (see
  // Lowerer::lowerRowsInOnePass); false: in two passes (count, then fill).
  bool rowsInOnePass = true;
  // Sparse workspaces' outputs of 4 MB and more in 2 MB pages (the ISM's
  // create flag 4; the kernel's own arrays follow TCC_HUGE_PAGE_MIN_BYTES,
  // a macro of the prelude).
  bool hugePages = true;
  // Workspaces in a sparse format (written by a where's producer, read by a
  // consumer that copies them into an output) are ISM workspaces: their
  // options by workspace name; one not listed gets the defaults.
  std::map<std::string, SparseWorkspaceOptions> sparseWorkspaces;
  // The CUDA target: loops parallelized over GPUBlock, GPUWarp or
  // GPUThread become Gpu loops (see gpu/plan_gpu_loop.cpp), which the CUDA
  // backend turns into kernels.
  bool cudaTarget = false;
  // The schedule says tensorcore(): an intrinsic on tensor cores must
  // compute the statement (TCA-SpMM for CSR float16 SpMM), else it is
  // refused with the reason.
  bool tensorCore = false;
};

// `parameters` lists the kernel's tensors in the order the entry point
// receives them; tensors written by `cin` that are not parameters are
// temporaries (workspaces).
ir::imp::Function lower(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                        const LowerOptions& options = {});

// Whether `function` stores every value of its output, a dense vector,
// before anything could read it: one plain store (no +=) at the variable of
// a loop of the function's own over the output's whole dimension, run in
// every iteration, and no other use of the output's values. Such an output
// need not arrive zeroed (see the assumption above); for anything else the
// answer is false.
bool storesEveryValueOfVectorOutput(const ir::imp::Function& function);

// Whether the lowerer can assemble an output stored in `format`: dense
// levels followed by unique compressed levels, in any mode order. Other
// formats are computed in the nearest supported one and converted.
bool isAssemblableOutputFormat(const ir::Format& format);
ir::Format nearestAssemblableFormat(const ir::Format& format);

}  // namespace tcc::lowering
