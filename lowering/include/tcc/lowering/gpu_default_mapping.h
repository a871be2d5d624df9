// The GPU mapping a statement gets on the cuda target when its schedule
// parallelizes no loop (TACO's hand-written GPU schedules, chosen
// automatically):
//
//  - When a loop below the outermost one (i) iterates a sparse level, the
//    statement is row-like (CSR SpMV, SpMM). If a further loop d indexes
//    only dense inputs and the output (SpMM's k), d is split into tiles of
//    64 and each (row, tile) goes to a warp: split(d, d_tile, d_in, 64),
//    split(d_in, d_round, d_lane, 32), reorder(i, d_tile, d_lane,
//    d_round, ...), fuse(i, d_tile, id_warp), parallelize(id_warp,
//    GPUWarp, NoRaces), parallelize(d_lane, GPUThread, NoRaces),
//    unroll(d_round, 2) and unroll(j, 4) for the walk over the nonzeros.
//    Lane l sums columns l and l + 32 of its tile in one walk over the
//    row's nonzeros (the CUDA backend's unroll-and-jam). Where i itself
//    is a compressed level's (MTTKRP's CSF slices), which no fuse can cut
//    into ranges, a warp takes each i and its lanes d: reorder(i, d, ...),
//    parallelize(i, GPUWarp, NoRaces), parallelize(d, GPUThread, NoRaces).
//    Otherwise each row goes to a warp (parallelize(i, GPUWarp, NoRaces))
//    whose lanes split the loop right below i, and when that loop is
//    summed they add their partial sums with warp shuffles
//    (parallelize(j, GPUThread, ParallelReduction)).
//  - Otherwise each iteration of the outermost loop goes to a thread
//    (parallelize(i, GPUThread, NoRaces)).
//  - Where the outermost loop k sums into a dense output, an index of the
//    output that every sparse input indexing it stores in its first level
//    becomes the outermost loop (reorder), and the rules above apply.
//    Where none can, the sum is reduced. Into a scalar: split(k, k_block,
//    k_in, 2048), split(k_in, k_round, k_thread, 256), reorder(k_block,
//    k_thread, k_round, ...), parallelize(k_block, GPUBlock, Atomics),
//    parallelize(k_thread, GPUThread, ParallelReduction), after pos(k,
//    k_pos, A(...)) where k iterates the sparse level of one operand of a
//    product; a thread per k with Atomics where the split cannot cut k.
//    Into other outputs: parallelize(k, GPUThread, Atomics). Under fp
//    strict a floating-point sum keeps one order every run: a scalar by
//    one block (divide(k, k_block, k_in, 1), threads of 1024), other
//    outputs by one thread (divide(k, k_thread, k_in, 1),
//    parallelize(k_thread, GPUThread, Atomics)); refused where a sum's
//    sparse operands meet over k. No loop inside a where goes to the GPU
//    (a warp's lanes there would fill a workspace each thread keeps).
//
// Rows against nonzeros, per matrix. A CSR SpMM with no schedule, C(i, k)
// = A(i, j) * B(j, k) (any product of A with dense operands), also gets a
// second mapping that splits A's nonzeros evenly, whatever rows they belong
// to (TACO's nonzero-split GPU schedule, as examples/gpu/spmm_nnz.tc):
//    reorder(i, j, k), fuse(i, j, ij), pos(ij, ij_pos, A(i, j)),
//    split(ij_pos, ij_warp, ij_in, 32), split(k, k_tile, k_lane, 32),
//    reorder(ij_warp, k_tile, k_lane, ij_in), fuse(ij_warp, k_tile,
//    ijk_warp), parallelize(ijk_warp, GPUWarp, Atomics),
//    parallelize(k_lane, GPUThread, Atomics), unroll(ij_in, 4).
// Both are lowered by the one lowering into one host part, beside tiles
// of 32 and 128 and a split in shares of 16, and the host part picks one
// per input (gpu_spmm_mappings.h). SpMV keeps its
// warp per row alone (a warp's lanes already share a long row; the split
// lost to it on every matrix measured).
#pragma once

#include <map>
#include <optional>

#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// The commands to append to a schedule whose loops (outermost first) are
// `loopOrder`; `reasons` gets one line per command for `tcc explain`.
struct GpuMappingOptions {
  // Sums into floating-point outputs come in one order every run (fp
  // strict): no atomic additions for them.
  bool sumsInOneOrder = false;
  // A sum of the outermost loop into a scalar split over blocks (else a
  // thread per iteration, for where the split does not fit).
  bool splitSums = true;
  // The statement concretized without the mapping (its relations, the
  // split, fuse, ... the loops derive from; its wheres).
  ir::IndexStmt concrete;
  std::vector<ir::ProvenanceRelation> relations;
};
// Accesses, literals, negations and products, divided by constants at
// most: a sum of such a body can be cut by its sparse operand's positions.
bool isScaledProduct(const ir::IndexExpr& expr);

std::vector<ScheduleCommand> defaultGpuMapping(const ir::IndexStmt& assignment,
                                               const std::vector<ir::IndexVar>& loopOrder,
                                               std::vector<std::string>& reasons,
                                               const GpuMappingOptions& options = {});

// The reductions of the default mapping where the outermost loop sums into
// a scalar: blocks of kSumBlockThreads threads, each block over
// kSumBlockShare iterations; in one block of kOneBlockThreads where the
// sum's order must not change from run to run.
inline constexpr int kSumBlockThreads = 256;
inline constexpr int kSumBlockShare = 2048;
inline constexpr int kOneBlockThreads = 1024;

// The mapping of a statement whose nested sums go to scalar temporaries
// (`y(i) = A(i,j) * x(j) + b(i)`: forall(i, where(y(i) = tj + b(i),
// forall(j, tj += A(i,j) * x(j))))), `concrete` its concrete index
// notation. The temporaries live in registers of the threads that own the
// output's iteration. Where one loop over an index of the output holds the
// wheres and a sum's loop iterates a sparse level (a row of A), each
// iteration goes to a warp whose lanes split every sum's first loop and
// add their partial sums with shuffles: parallelize(i, GPUWarp, NoRaces),
// parallelize(j, GPUThread, ParallelReduction) for each such j. Otherwise
// each iteration of the outermost loop goes to a thread. A loop around the
// wheres that sums is reduced as an outermost sum is above (a thread per
// iteration, adding atomically; one thread under fp strict); a statement
// with no loop around its wheres (a scalar output: the temporaries on the
// host, where no GPU thread can add) is refused with the reason
// (LoweringError).
std::vector<ScheduleCommand> defaultGpuMappingOfNestedSums(const ir::IndexStmt& assignment,
                                                           const ir::IndexStmt& concrete,
                                                           std::vector<std::string>& reasons,
                                                           const GpuMappingOptions& options = {});

// `concrete` (scheduled for the cuda target, by the default mapping or
// by hand) with the fill loops of the workspaces whose where no loop
// holds (`precompute(A(i), i, iw)`: where(forall(i, ... w(i) ...),
// forall(iw, w(iw) = A(iw)))) over GPU threads. No schedule command can
// name such a loop (its variable is no loop of the statement's), and left
// on the host it refuses the statement. The workspace is one copy in
// device memory, allocated zeroed; each fill is a kernel of its own, run
// before the kernels that read it, a thread per iteration of its
// outermost loop, where that loop's variable indexes every entry the fill
// writes and iterates at most one sparse operand (several are co-iterated
// by a while loop). A fill loop a command mapped already
// (precompute(A(i), i, i), parallelize(i, ...)) stays as it is.
// `reasons` gets a line per fill for `tcc explain`.
ir::IndexStmt mapWorkspaceFillsToGpuThreads(const ir::IndexStmt& concrete, std::vector<std::string>& reasons);

// The mapping of a statement whose terms reduce over different variables
// and add into its dense output directly (ConcretizedStatement::
// termsAddIntoOutput: a sequence of one loop nest per term): each nest is
// a kernel of its own, a GPU thread per iteration of its outermost loop,
// the loops inside run by that thread; NoRaces where that loop's variable
// indexes the output, else Atomics (iterations add into the same entries).
// The terms' variables may repeat across the nests at different depths, so
// no parallelize by name could map them all. With `sumsInOneOrder` (fp
// strict), a nest whose outermost loop sums into a floating-point output
// runs in one GPU thread instead, in loop order (divide(v, v_thread, v_in,
// 1), v_thread on GPUThread); refused where v iterates a sparse level or
// comes from a schedule's relation. `reasons` gets a line per nest for
// `tcc explain`.
ir::IndexStmt mapTermNestsToGpuThreads(const ir::IndexStmt& concrete, std::vector<std::string>& reasons,
                                       bool sumsInOneOrder = false);

// `concrete` (scheduled for the cuda target) with GPU units given out of
// order (a GPUBlock loop inside a GPUThread loop, a GPUThread loop directly
// inside another) rewritten into the order kernels run them in: a GPU
// loop whose nearest GPU loops below share a unit of lower rank exchanges
// units with them; two loops on one unit with nothing between, over dense
// ranges, become one loop over their fuse on that unit (see
// order_gpu_units.cpp). `concrete` itself where nothing changes; `reasons`
// gets a line per change for `tcc explain`, `kept` why a GPU loop stays
// inside one of the same or a later unit (by its variable), for the
// refusal (LowerOptions::gpuUnitsKept), by the variable's name.
ir::IndexStmt orderGpuUnits(const ir::IndexStmt& concrete, std::vector<std::string>& reasons,
                            std::map<std::string, std::string>& kept);

// The nonzero-split mapping of a row-like statement over a CSR matrix (see
// above), or nothing when the statement is not one; `reasons` gets its
// lines for `tcc explain`. `matrix` names the CSR input.
struct BalancedGpuMapping {
  std::vector<ScheduleCommand> commands;
  std::string matrix;
};
// `share` nonzeros a warp.
std::optional<BalancedGpuMapping> nonzeroSplitGpuMapping(const ir::IndexStmt& assignment,
                                                         const std::vector<ir::IndexVar>& loopOrder, int share,
                                                         std::vector<std::string>& reasons);

// The rule: the nonzero split runs when A's longest row holds at least
// kBalancedLongestRow nonzeros and at least kBalancedSkew times the mean row
// (longest * rows >= kBalancedSkew * nonzeros): there the warps walking the
// longest row alone hold up the whole row-based kernel. Measured on the
// H100 (split against rows, cuSPARSE = 1): adder_dcop_05, a row of 1310
// among rows of 6 (214x the mean), 0.39x against 0.23x; the R-MAT graph
// 0.37x against 0.32x; but mbeacxc (4.8x the mean) 0.42x against 0.58x and
// kron(mbeacxc,LF10) (5.2x) 0.33x against 0.76x, hence 32. Both numbers
// are cheap: the longest row comes from a host copy of A's pos array made
// once per device tensor (tcc_longest_segment), the nonzeros from its ends.
inline constexpr int64_t kBalancedLongestRow = 256;
inline constexpr int64_t kBalancedSkew = 32;
// Whether the rule picks the nonzero split for a matrix with these rows
// (a clause of the rules below and of the SpMM's, written once with them
// in default_mapping.cpp; gpu_input_rules.h derives their host statements
// and explain text).
bool balancedRowRule(int64_t longestRow, int64_t rows, int64_t nonzeros);

// A CSR output's rows (C(i, j) = A(i, j) + B(i, j), C = 2 * A, ...) are each
// assembled by one GPU thread by default; where rows are long, by a warp
// instead, each lane merging a slice of the row's columns (parallelize(i,
// GPUWarp), parallelize(j, GPUThread): lane_sliced_rows.cpp). Both are
// lowered and the host part picks one per input by the row lengths of
// `matrix`, the first CSR operand indexed as the output is (nothing where
// the statement has none, or is not a loop over rows then columns).
std::optional<BalancedGpuMapping> laneSlicedGpuMapping(const ir::IndexStmt& assignment,
                                                       const std::vector<ir::IndexVar>& loopOrder,
                                                       std::vector<std::string>& reasons);
// The rule: a warp a row where the mean row holds at least
// kLaneSlicedMeanRow entries (nonzeros >= kLaneSlicedMeanRow * rows), or
// where the longest row is long and skewed as balancedRowRule takes it (a
// thread a row would wait on it alone); a thread a row otherwise (a warp
// would idle most of its lanes on short rows, and scan 32 counts a row).
inline constexpr int64_t kLaneSlicedMeanRow = 32;
// Whether the rule picks a warp a row.
bool laneSlicedRowRule(int64_t longestRow, int64_t rows, int64_t nonzeros);
// One host part that computes the rule and runs `lanes`' body where it
// picks a warp a row, `rows`' body otherwise.
ir::imp::Function chooseLaneSlicedRows(const ir::imp::Function& rows, const ir::imp::Function& lanes,
                                       const std::string& matrix);
// The explain line of the rule.
std::string laneSlicedRuleText(const std::string& matrix);
// The device buffers (per-thread scratch, shared workspaces) of
// `alternative`, a kernel a host part may choose, added to `chooser`'s
// where it lacks them by name.
void keepDeviceBuffersOf(const ir::imp::Function& alternative, ir::imp::Function& chooser);

// Whether a schedule parallelizes any loop (then it gets no default).
bool parallelizesLoops(const ScheduleRequest& request);

}  // namespace tcc::lowering
