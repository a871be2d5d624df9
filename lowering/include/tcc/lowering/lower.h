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
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"

namespace tcc::lowering {

// A refusal. `command()`: the schedule command whose provenance made what
// is refused (the split that derived the loop's variable, the parallelize
// that asked for the loop), as its index in ScheduleRequest::commands;
// the caller maps it to the command's source. `atTensorCore()`: the
// schedule's tensorcore() (a flag of the request, not one of its
// commands). Neither: the statement as a whole is refused.
class LoweringError : public std::runtime_error {
 public:
  explicit LoweringError(const std::string& message, std::optional<size_t> command = std::nullopt)
      : std::runtime_error(message), command_(command) {}
  static LoweringError ofTensorCore(const std::string& message) {
    LoweringError error(message);
    error.tensorCore_ = true;
    return error;
  }
  std::optional<size_t> command() const { return command_; }
  bool atTensorCore() const { return tensorCore_; }
  // A GPU loop inside one of the same or a later unit (blocks, then warps,
  // then threads): the refusal orderGpuUnits's rewrite may lift.
  bool gpuUnitsOutOfOrder() const { return gpuUnitsOutOfOrder_; }
  LoweringError& markGpuUnitsOutOfOrder() {
    gpuUnitsOutOfOrder_ = true;
    return *this;
  }

 private:
  std::optional<size_t> command_;
  bool tensorCore_ = false;
  bool gpuUnitsOutOfOrder_ = false;
};

// The schedule commands behind a statement's loops, by their index in
// ScheduleRequest::commands (loopCommandsOf, schedule.h builds it from a
// request), for the command a refusal names: the provenance relation each
// split, divide, fuse, pos and bound added, each parallelize, the
// precompute that stands where a sparse output's workspace would go
// (ConcretizedStatement::outputOrderCommand), and the command that asked
// for a workspace. Empty: no command is named.
struct LoopCommands {
  std::vector<std::pair<ir::ProvenanceRelation, size_t>> relations;
  struct Parallelize {
    ir::IndexVar var;
    ir::ParallelUnit unit = ir::ParallelUnit::NotParallel;
    ir::OutputRaceStrategy strategy = ir::OutputRaceStrategy::IgnoreRaces;
    size_t command = 0;
  };
  std::vector<Parallelize> parallelizes;
  struct Precompute {
    size_t command = 0;
    std::string text;  // as written, for messages
  };
  std::optional<Precompute> outputOrder;
  // The precompute, dense_workspace or sparse_workspace that asked for a
  // workspace (the first, if several).
  std::optional<Precompute> workspace;
  // The GPU loops are tcc's default mapping's (the schedule has no
  // parallelize), which refusals say instead of naming a command.
  bool defaultGpuMapping = false;

  // The command that added `relation` (found by the variables it
  // introduces, which no other command introduces).
  std::optional<size_t> commandOf(const ir::ProvenanceRelation& relation) const;
  // The parallelize behind a loop over `loop` with that unit and race
  // strategy: the first over `loop` itself, else the only one over a
  // variable that `loop` derives from through the relations (a later
  // split, fuse, ... replaced the parallelized loop); nothing where there
  // is none, or two could be.
  std::optional<size_t> parallelizeOf(const ir::IndexVar& loop, ir::ParallelUnit unit,
                                      ir::OutputRaceStrategy strategy) const;
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
  // A sum below the statement's top is computed once before the loop it
  // does not depend on, or before the lattice cases that would each
  // compute it alike (hoist_nested_sums.cpp); false: in every case, the
  // form before (for comparisons).
  bool hoistNestedSums = true;
  // A co-iteration whose cases hold loops is one while-loop over all its
  // operands, exhausted ones at a coordinate past the others (instead of
  // one loop per lattice point, each printing the cases it has); false:
  // one per point, the form before (for comparisons).
  bool oneMergeLoop = true;
  // One merge loop (of up to 6 operands and 4 cases or more) picks its
  // case by a switch on which operands are at the coordinate; false: by
  // testing the cases in turn, the form before (for comparisons).
  bool mergeLoopSwitch = true;
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
  // The cuda target: a sparse output's counts become offsets through a
  // parallel scan (tiles on GPU threads, gpu/gpu_prefix_sums.cpp); false:
  // on one GPU thread, the form before (for comparisons).
  bool gpuParallelPrefixSums = true;
  // The schedule says tensorcore(): an intrinsic on tensor cores must
  // compute the statement (TCA-SpMM for CSR float16 SpMM), else it is
  // refused with the reason.
  bool tensorCore = false;
  // The schedule commands behind the loops, which refusals name.
  LoopCommands commands;
  // The cuda target: why a GPU loop's unit stays out of order (inside a
  // loop of the same or a later unit) where orderGpuUnits could neither
  // exchange nor collapse it, by the name of the loop's variable (lowering
  // may stand a variable of the same name in for it), for its refusal.
  std::map<std::string, std::string> gpuUnitsKept;
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
