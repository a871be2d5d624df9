// The lowerer's state, shared by its translation units (lower_loops.cpp:
// foralls, merge-lattice loops, where-statements; lower_storage.cpp: tensor
// arrays, output assembly, expressions and stores). See tcc/lowering/lower.h.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "merge_lattice.h"
#include "output_visit_order.h"
#include "tcc/ir/imperative.h"
#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

namespace imp = ir::imp;

// One level of one access, iterated or located while lowering a forall.
struct LevelIterator {
  int id = -1;
  const ir::AccessNode* access = nullptr;
  ir::TensorVar tensor;
  int level = 0;
  ir::LevelFormat format;
  bool workspaceList = false;  // walks a dense workspace's touched-coordinate list
  std::string varName;         // the index variable, for naming generated variables

  bool locatable() const { return format.isDense() && !workspaceList; }
  // Set while emitting the loop.
  imp::Expr pos, end, coord, segmentEnd;
};

struct LoopRange {
  imp::Expr begin, end;
};

struct LoopPlan {
  imp::LoopKind kind = imp::LoopKind::Serial;
  std::vector<imp::LoopReduction> reductions;
  bool atomicStores = false;  // stores that race are made atomic
};

struct PinnedPosition {
  ir::Access access;
  imp::Expr position;
  ir::ProvenanceRelation relation;  // the pos(...) that pinned it: refusals name it
};

// The arrays of one tensor as the kernel sees them.
struct TensorStorage {
  std::string name;
  std::vector<imp::Expr> dims;      // per mode (int32)
  std::vector<imp::Expr> pos, crd;  // per level; undefined for dense levels
  imp::Expr vals;
  bool isOutput = false;
  bool isWorkspace = false;
  // Sparse-output assembly, per level (compressed levels only).
  std::vector<imp::Expr> appendPosition, crdCapacity, posCapacity;
  // The first capacity of an assembled output's last crd (and vals) arrays
  // in place of the fixed one, when the loops suggest one: the entries the
  // inputs store (reserveAppends). Only a start: appends still grow them.
  imp::Expr firstCapacity;
  // Dense workspaces with a list of touched coordinates.
  imp::Expr list, listSize, flags;
  // A workspace under a parallel loop has one copy per thread: these arrays
  // hold them all, and vals/list/flags point at the running thread's copy.
  imp::Expr valsOfAllThreads, listOfAllThreads, flagsOfAllThreads, sizePerThread;
  // On the cuda target, a dense workspace whose where runs inside a GPU
  // loop: each GPU thread's copy lives in a scratch buffer the host step
  // allocates per launch (valsOfAllThreads), selected by the thread's
  // global index and zeroed before each fill. The copies are interleaved:
  // entry e of thread t at e * T + t (T threads in the launch, the
  // entries' stride gpuThreadStride), so a warp's lanes reading the same
  // entry of their copies touch consecutive addresses (coalesced).
  bool perGpuThread = false;
  imp::Expr gpuThreadStride;
  // On the cuda target, a dense workspace whose where is outside the GPU
  // loops: one copy in device memory, which GPU loops fill as they do an
  // output (races need Atomics or a reduction), allocated by the host.
  bool sharedOnGpu = false;
  imp::Expr scalar;  // order-0 workspace
  // A sparse (ISM) workspace: its handle; with one workspace per thread,
  // the running thread's, inside a thread loop.
  imp::Expr ismHandle, ismThreadHandle;
  bool ismPerThread = false;
  bool ismDrained = false;  // drained per fill and read as compressed levels
  SparseWorkspaceOptions ismOptions;
  // On the cuda target, a sparse workspace of order 1 whose where runs
  // inside a GPU loop (gpu/gpu_sparse_workspace.cpp): each GPU thread's
  // own coordinate list and values (crd[0], vals, `gpuSparseCount`
  // entries; `sizePerThread` of them fit) in scratch buffers of the launch
  // (crdOfAllThreads, valsOfAllThreads, posOfAllThreads), sorted and merged
  // in the thread when full and after the fill, then read by the consumer
  // as a compressed level (pos[0] = {0, entries}).
  bool gpuSparse = false;
  imp::Expr gpuSparseCount, crdOfAllThreads, posOfAllThreads, posPerThread;
};

// Which parts of an assembled (sparse) output a lowering pass writes.
enum class OutputPass {
  Fused,     // coordinates and values together, growing arrays as needed
  Assemble,  // pos and crd only
  Compute,   // values only, into arrays the assemble pass sized
  // Rows assembled in parallel: Count stores each row's size in pos, a
  // prefix sum turns sizes into offsets, then Fill writes crd and values
  // from each row's offset.
  Count,
  Fill,
  // Rows assembled in parallel in one pass (lowerRowsInOnePass): each
  // thread appends a chunk of rows to arrays of its own, then copies them
  // to the output at the chunk's offset.
  Chunk,
};

// Whether a pass writes an assembled output's values, and its coordinates.
inline bool writesValues(OutputPass pass) { return pass != OutputPass::Assemble && pass != OutputPass::Count; }
inline bool writesCoordinates(OutputPass pass) { return pass != OutputPass::Compute && pass != OutputPass::Count; }

// An int64 array a GPU prefix sum scans: `buffer` from entry `offset`
// (undefined: from entry 0).
struct GpuScanArray {
  imp::Expr buffer;
  imp::Expr offset;
};

class Lowerer {
 public:
  Lowerer(std::vector<ir::TensorVar> parameters, LowerOptions options);
  imp::Function run(const ir::IndexStmt& cin);

 private:
  // lower_loops.cpp
  imp::Stmt lower(const ir::IndexStmt& stmt);
  imp::Stmt lowerForall(const ir::ForallNode* forall);
  imp::Stmt lowerWhere(const ir::WhereNode* where);

  // hoist_nested_sums.cpp: a sum below the statement's top (a where filling
  // a scalar temporary) is computed once, not in every lattice case.
  // Before `forall`'s loop: the sums in its body that read no variable of
  // it or of the loops inside (loop-invariant); empty when there are none.
  // Their temporaries stay in hoistedSums_ while the HoistedSums given
  // lives (also when lowering throws: a caller may try another form).
  struct HoistedSums {
    std::set<ir::TensorVar>& marked;
    std::vector<ir::TensorVar> temporaries;
    explicit HoistedSums(std::set<ir::TensorVar>& marked) : marked(marked) {}
    HoistedSums(const HoistedSums&) = delete;
    HoistedSums& operator=(const HoistedSums&) = delete;
    ~HoistedSums() {
      for (const auto& temporary : temporaries) marked.erase(temporary);
    }
  };
  std::vector<imp::Stmt> hoistLoopInvariantSums(const ir::ForallNode* forall, HoistedSums& hoisted);
  // Before the cases of one iteration of `forall`'s loop: the sums in its
  // body that every case computing them computes alike (their operands at
  // the loop's variable intersect), when two cases or more would compute
  // them; each guarded by `presentAt` of its sparse operands' iterators
  // (those the map holds, undefined where the iterator is exhausted; the
  // others are located, always present).
  // `cases` holds the sparse iterator ids of each case.
  std::vector<imp::Stmt> hoistSumsOutOfCases(const ir::ForallNode* forall, const std::map<int, imp::Expr>& presentAt,
                                             const std::vector<std::vector<int>>& cases, HoistedSums& hoisted);
  bool hoistsSums() const;
  // The scalar temporaries `where` fills, when it can be computed apart
  // from its consumer: only sum temporaries, plain loops, nothing read that
  // another statement of `scope` writes. Empty otherwise.
  std::vector<ir::TensorVar> hoistableTemporaries(const ir::WhereNode* where, const ir::IndexStmt& scope) const;
  std::vector<imp::Stmt> computeHoistedSum(const ir::WhereNode* where, const std::vector<ir::TensorVar>& temporaries,
                                           const imp::Expr& guard, HoistedSums& hoisted);
  // Scalar temporaries computed before the lattice cases that read them.
  std::set<ir::TensorVar> hoistedSums_;
  // Threads owning ranges of a per-thread sparse workspace's first level
  // (SparseWorkspaceOptions::ownerPartition): the variable they own, when
  // `forall` is such a thread loop.
  std::optional<ir::IndexVar> ownedVariable(const ir::ForallNode* forall);
  imp::Stmt lowerOwnedRanges(const ir::ForallNode* forall, const ir::IndexVar& owned);
  // A thread loop whose iterations merge sparse operands' cursors, cut
  // into ranges of coordinates instead (lower_coordinate_chunks.cpp):
  // whether `forall` is one, given its iterators and whether one unique
  // level drives it alone (a counted loop the threads split as it is).
  bool mergesInCoordinateChunks(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                bool countedByLoneDriver) const;
  // `how`: what a range's loop walks (for the generated code's comment).
  imp::Stmt lowerInCoordinateChunks(const ir::ForallNode* forall, const std::string& how);
  // A sparse output whose levels the ranges of such a loop append in
  // order, in place (RangeAppendedOutput): its first level compressed, or
  // (CPU threads) dense levels above its compressed ones. Whether `forall`
  // is that loop over `output`'s first index (read off the statement before
  // it is lowered), and the passes that assemble it.
  bool rangesAppend(const ir::ForallNode* forall, const ir::AssignmentNode* assignment) const;
  // The assignment the ranges of the top loop append (rangesAppend): the
  // only one under it to a kernel parameter; the others (producers of where
  // statements below the top on CPU threads: a sum's scalar temporary, a
  // precompute's workspace) write temporaries each thread keeps its own
  // copy of. Null where none is.
  const ir::AssignmentNode* assignmentAppendedByRanges(const ir::ForallNode* top) const;
  std::vector<imp::Stmt> lowerRangesAppendingInTwoPasses(const ir::IndexStmt& cin);
  // The cuda target's prefix sums of a sparse output's counts: entries
  // 1..counts of each of `arrays` (int64[counts + 1], entry 0 zero) turned
  // into offsets in place, by GPU loops (gpu/gpu_prefix_sums.cpp); `what`
  // names the counts in the loops' comments.
  std::vector<imp::Stmt> gpuPrefixSums(const std::vector<imp::Expr>& arrays, const imp::Expr& counts,
                                       const std::string& what);
  // One level of it: `arrays` scanned by a GPU thread per tile (their
  // entries 1..countsOfLevels[level]), each tile's total stored in the
  // level's totals (allTotals[level], tilesOfLevels[level] tiles), which
  // the levels below scan in turn; `names` the arrays' at the first level.
  void scanLevels(const std::vector<GpuScanArray>& arrays, const std::vector<std::string>& names,
                  const std::vector<std::vector<GpuScanArray>>& allTotals,
                  const std::vector<imp::Expr>& tilesOfLevels, const std::vector<imp::Expr>& countsOfLevels,
                  int level, const std::string& what, std::vector<imp::Stmt>& stmts);
  // The last level (or the whole sum, at level 0): on one GPU thread.
  void scanSerially(const std::vector<GpuScanArray>& arrays, const imp::Expr& counts, int level,
                    const std::string& what, std::vector<imp::Stmt>& stmts);
  imp::Stmt lowerAssignment(const ir::AssignmentNode* assignment);
  // The iterators over `forall`'s variable: one for each access of its body
  // that indexes the variable, but left-hand sides (assembled, in
  // lowerCase), ids from `firstId` on. `located(access, level)`: whether the
  // loops around have fixed the access's position at that level; an access
  // whose parent level they have not is left to be located later where it
  // is dense or a workspace, and refused otherwise.
  std::vector<LevelIterator> iteratorsOf(const ir::ForallNode* forall,
                                         const std::function<bool(const ir::AccessNode*, int)>& located, int firstId);
  // Why iteratorsOf refuses those accesses (an access storing the variable
  // at two levels, a sparse one whose parent level is not located), or
  // nothing where it does not.
  std::optional<std::string> iterationRefusal(const ir::ForallNode* forall,
                                              const std::function<bool(const ir::AccessNode*, int)>& located);
  // The merge lattice of `forall`'s loop over those iterators.
  std::vector<LatticePoint> latticeOf(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators);
  imp::Stmt lowerLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                      const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  imp::Stmt lowerDenseDrivenLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                 const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  imp::Stmt lowerSparseDrivenLoops(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                   const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  // How a forall's loop runs (its attributes), after checking that it can
  // run that way: races handled by the chosen strategy, no shared cursors.
  LoopPlan planLoop(const ir::ForallNode* forall);
  // gpu/plan_gpu_loop.cpp: planLoop for the GPU units.
  LoopPlan planGpuLoop(const ir::ForallNode* forall);
  void planSumIntoTemporary(const ir::ForallNode* forall, const ir::TensorVar& temporary, LoopPlan& plan);
  void requireCpuTarget(const ir::ForallNode* forall) const;
  // Marks the body of a loop as parallel (and its racing stores atomic)
  // while it is lowered.
  class LoopScope {
   public:
    LoopScope(Lowerer& lowerer, const LoopPlan& plan);
    ~LoopScope();
    LoopScope(const LoopScope&) = delete;
    LoopScope& operator=(const LoopScope&) = delete;
    // What each iteration of a thread loop starts with: the running
    // thread's own sparse workspaces.
    const std::vector<imp::Stmt>& iterationPrologue() const { return prologue_; }

   private:
    Lowerer& lowerer_;
    bool wasParallel_, wasAtomic_, wasVectorized_;
    std::vector<imp::Stmt> prologue_;
    std::vector<ir::TensorVar> boundWorkspaces_;
    imp::LoopKind enclosingGpuUnit_;
  };
  // Gives the running thread the coordinates [range.begin, range.end) of
  // `var` (ownedRanges_) while it lives, whether lowering its loops
  // returns or throws.
  class OwnedRangeScope {
   public:
    OwnedRangeScope(Lowerer& lowerer, const ir::IndexVar& var, LoopRange range)
        : lowerer_(lowerer), name_(var.name()) {
      lowerer_.ownedRanges_[name_] = std::move(range);
    }
    ~OwnedRangeScope() { lowerer_.ownedRanges_.erase(name_); }
    OwnedRangeScope(const OwnedRangeScope&) = delete;
    OwnedRangeScope& operator=(const OwnedRangeScope&) = delete;

   private:
    Lowerer& lowerer_;
    std::string name_;
  };
  LoweringError sparseVariableScheduled(const ir::IndexVar& var, const ir::TensorVar& tensor) const;
  // Whether `output`'s rows can be assembled in parallel by a loop over
  // `var`: a dense first level indexed by var's origin, then one compressed level.
  bool rowsAssembledInParallel(const ir::Access& lhs, const ir::IndexVar& var) const;

  // lower_derived_loops.cpp: loops over variables that split, divide, fuse,
  // pos and bound introduced, and the recovery of the variables they replace.
  imp::Stmt lowerDerivedLoop(const ir::ForallNode* forall);
  const ir::SplitRelation* peeledSplit(const ir::ForallNode* forall) const;
  // Blocks up to this size are worth lowering twice to unroll the full ones.
  static constexpr int64_t kLargestPeeledSplit = 16;
  // Once every variable the pending relations introduced has a value, fixes
  // the variables they replaced (pinning statement variables, which join
  // `pinned`) and lowers `body` inside one iteration of each pinned variable.
  imp::Stmt recoverParents(std::vector<ir::ProvenanceRelation> pending, std::vector<ir::IndexVar> pinned,
                           const ir::IndexStmt& body);
  // [begin, end) of a variable; declarations it needs go to `setup`.
  LoopRange rangeOf(const ir::IndexVar& var, std::vector<imp::Stmt>& setup);
  // The loop itself (lowerDerivedLoop first looks for the loops of a pos).
  imp::Stmt lowerDerivedFor(const ir::ForallNode* forall);
  // The reads in `body` of an operand a sparse level of which iterates `var`.
  std::vector<const ir::AccessNode*> sparseReadsOf(const ir::IndexStmt& body, const ir::IndexVar& var) const;
  // Whether those levels can be searched for a block of coordinates:
  // ordered compressed levels of inputs (not a workspace's list).
  bool searchableInBlocks(const std::vector<const ir::AccessNode*>& reads, const ir::IndexVar& var) const;
  // The coordinates of `parent` (set here) that the loop over a split's or
  // divide's inner part, or a bound variable, visits, where a sparse level
  // of an operand iterates parent: the loop then iterates them alone (a
  // bound's, undefined: all of them, the bound checked when the kernel starts).
  std::optional<LoopRange> coordinateBlock(const ir::ForallNode* forall, ir::IndexVar& parent);
  // pos: one iteration at a position fixed by the loops over the pos variable.
  imp::Stmt lowerPinnedPositionLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                    const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  // lower_position_remainder.cpp: pos over an access A in an expression
  // with terms without A (a union). The loops over A's positions compute
  // the cases with A; then the loops over the variables they replaced
  // (the statement's, as they were before the pos) compute the others, at
  // the coordinates the other operands store and A does not.
  // The pos whose loops start at `forall` (its variable derives from the
  // pos variable, and no loop around it does), or null.
  const ir::ProvenanceRelation* positionLoopsStartingAt(const ir::ForallNode* forall) const;
  imp::Stmt lowerPositionLoops(const ir::ForallNode* forall, const ir::ProvenanceRelation& relation);
  bool descendsFrom(const ir::IndexVar& var, const ir::IndexVar& ancestor) const;
  // The statement variables a derived variable's loop iterates, outermost
  // first (fuse(i, k, f) -> i, k; split(kp, kp0, kp1) of pos(k, kp, ..) -> k).
  std::vector<ir::IndexVar> statementVarsOf(const ir::IndexVar& var) const;
  // In the loops after the positions: at the variable the pos iterated,
  // drops A's iterator and the lattice points with A, and prepares the
  // search that skips A's coordinates (remainderSkips_, in lowerCase); at
  // the outer variable of a fused pos, drops the points whose terms all
  // have A. False where no point is left (the loop has nothing to do).
  bool restrictToRemainder(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                           std::vector<LatticePoint>& lattice, std::vector<imp::Stmt>& setup);
  // `body` run only where A does not store the coordinate of `var`.
  imp::Stmt skipStoredCoordinates(const ir::IndexVar& var, const imp::Stmt& body);
  struct RemainderRole {
    ir::Access access;      // A
    bool excludes = false;  // the pos's own variable (else a fused pos's outer one)
  };
  std::map<ir::IndexVar, RemainderRole> remainderRoles_;
  // Outputs that several assignments add into (the nests of terms that
  // reduce over different variables, on the cuda target): no reduction's
  // sum is an entry's only contribution, stored in place of adding it.
  std::set<ir::TensorVar> outputsOfSeveralAssignments_;
  // A's segment at the variable, and a cursor into it that moves forward
  // with the loop's coordinates.
  struct StoredCoordinates {
    imp::Expr crd, cursor, end;
    // A GPU loop's threads share no cursor: each coordinate is searched
    // for from the segment's start (cursor, never moved).
    bool fromSegmentStart = false;
  };
  std::map<ir::IndexVar, StoredCoordinates> remainderSkips_;
  // The pos commands (their toString) whose position loops met a union
  // while they were lowered (lowerPinnedPositionLoop).
  std::set<std::string> unitedPositions_;
  // pos over fuse(i, j, f) of an access's two outer levels: the fuse, else null.
  const ir::FuseRelation* fusedPosition(const ir::ProvenanceRelation& relation) const;
  imp::Expr firstLevelSegments(const ir::Access& access);
  std::set<ir::IndexVar> originsOf(const ir::IndexVar& var) const;
  bool derivesOnlyFrom(const ir::IndexVar& var, const std::vector<ir::IndexVar>& vars) const;
  void requireParallelizable(const ir::ForallNode* forall, bool condition, const std::string& reason) const;
  // A GPU loop that co-iterates a sparse level searches it for each
  // iteration's coordinate: the level must be ordered, compressed or singleton.
  void requireSearchable(const ir::ForallNode* forall, const LevelIterator& iterator) const;
  // The statements for one lattice point, with the point's expression.
  imp::Stmt lowerCase(const ir::ForallNode* forall, const LatticePoint& point, const ir::AssignmentNode* sole);
  std::vector<imp::Stmt> locateDenseIterators(std::vector<LevelIterator>& iterators, const imp::Expr& coordinate);
  // `inAnyOrder`: a dense workspace's list of touched coordinates is walked
  // as it was filled, unsorted (listOrderUnneeded).
  std::vector<imp::Stmt> initializeSparseIterator(LevelIterator& iterator, bool inAnyOrder = false);
  // Whether the loop over `list`, a dense workspace's touched coordinates
  // that no other sparse operand joins, may visit them in any order: its
  // body only inserts into sparse (ISM) workspaces, which sort what they
  // hold, each filled by that one assignment, at entries indexed by the
  // loop's variable and by every loop inside the workspace's where (so no
  // two inserts meet at a coordinate, and each entry's sum is the same, to
  // the bit, however the ISM batches them).
  bool listOrderUnneeded(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                         const LevelIterator& list);
  // The loops around each sparse (ISM) workspace's where while its producer
  // is lowered, for a workspace one assignment of that producer fills.
  std::map<ir::TensorVar, std::set<ir::IndexVar>> ismFillScopes_;
  // Where `useful` is given, the coordinate reads as INT32_MAX when it
  // does not hold (the iterator is past its entries, or no lattice point
  // it is in can be met again).
  std::vector<imp::Stmt> readCoordinate(LevelIterator& iterator, const imp::Expr& useful = imp::Expr());
  // Whether a co-iteration's loops, one per set of operands in `loops`,
  // become one loop over all of them (LowerOptions::oneMergeLoop).
  bool mergesInOneLoop(const ir::ForallNode* forall, const std::vector<std::vector<int>>& loops) const;
  // Whether the one loop's cases, each holding the loops below for the
  // operands it has, become one body for all operands, an operand absent at
  // the coordinate iterating empty ranges below (emptyBelowUnless_).
  bool unitesByEmptyRanges(const ir::ForallNode* forall, const std::vector<LevelIterator*>& driving,
                           size_t cases, size_t loops, const ir::AssignmentNode* sole) const;
  std::vector<imp::Stmt> findSegmentEnd(LevelIterator& iterator);
  // Moves the iterator past `coordinate` when it is there; moveOn: past its
  // current coordinate (its run of them on a non-unique level).
  imp::Stmt advance(const LevelIterator& iterator, const imp::Expr& coordinate);
  imp::Stmt moveOn(const LevelIterator& iterator);
  // Before the loops of one co-iteration (or one driver's loop): a single
  // capacity test for every output whose last level this loop appends to,
  // sized by the sparse operands' remaining positions (each iteration
  // appends at most once), so the appends inside test nothing. Marks those
  // outputs in reservedOutputs_ and records a first capacity for them
  // (storedEntriesBound). `ranges`: each sparse operand's [start, end) of positions.
  std::vector<imp::Stmt> reserveAppends(const ir::ForallNode* forall, const std::vector<const LevelIterator*>& sparse,
                                        const std::vector<std::pair<imp::Expr, imp::Expr>>& ranges,
                                        const std::vector<LatticePoint>& lattice);
  // The entries a loop that appends once an iteration to an output's last
  // level stores at most, where its sparse operands each iterate their
  // last level, compressed (an elementwise kernel): what they store,
  // summed over a union of them, the least for an intersection; undefined
  // otherwise. A bound where each stored entry is visited once, a first
  // capacity elsewhere.
  imp::Expr storedEntriesBound(const std::vector<const LevelIterator*>& sparse, bool unitesOperands) const;
  // The bound on the entries of the row-parallel output that `assignment`
  // appends to, where the statement lets its rows go in one pass
  // (lowerRowsInOnePass), read off the statement before it is lowered:
  // the loop over `row` is the outermost, over the variable itself, and
  // its operands locate their rows (dense levels), so a chunk of rows is a
  // range of its iterations; the loop over the output's last variable
  // co-iterates sparse operands whose entries bound the output's
  // (storedEntriesBound), each visited once (every loop around it iterates
  // a variable of each). Undefined elsewhere.
  imp::Expr onePassBound(const ir::IndexStmt& cin, const ir::AssignmentNode* assignment, const ir::IndexVar& row);

  // lower_storage.cpp
  // Names a parameter's arrays (its TensorStorage); declarationsOf then
  // declares them, once the loops are lowered and the outputs' first
  // capacities known.
  void declareTensor(const ir::TensorVar& tensor, bool isOutput);
  std::vector<imp::Stmt> declarationsOf(const ir::TensorVar& tensor) const;
  void declareWorkspace(const ir::TensorVar& workspace, bool withList, bool perThread);
  // A dense workspace whose where runs inside a GPU loop: a copy per GPU
  // thread, in a scratch buffer of the launch (TensorStorage::perGpuThread).
  void declareGpuThreadWorkspace(const ir::TensorVar& workspace);
  // Sets a workspace's dims (from the parameters' dimensions, or fixed
  // sizes); returns its entries.
  imp::Expr sizeWorkspace(const ir::TensorVar& workspace, TensorStorage& stored);
  // The running thread's copy of a per-thread workspace, at the start of its where.
  std::vector<imp::Stmt> selectThreadCopy(TensorStorage& storage);
  // The running GPU thread's copy, zeroed (its last fill's values are
  // still there), at the start of its where.
  std::vector<imp::Stmt> selectGpuThreadCopy(const ir::TensorVar& workspace, TensorStorage& storage);
  void finishOutputs();
  imp::Expr parentPosition(const ir::AccessNode* access, int level) const;
  imp::Expr positionOf(const ir::AccessNode* access);
  // Where an access's value is in its vals array: its position, times the
  // stride of a GPU thread's interleaved copy (TensorStorage::perGpuThread).
  imp::Expr valuePositionOf(const ir::AccessNode* access);
  imp::Expr lowerExpr(const ir::IndexExpr& expr);
  imp::Stmt store(const ir::AssignmentNode* assignment, imp::Expr value, bool accumulate);
  // Output levels bound by the current forall: before and after a case body.
  std::vector<imp::Stmt> outputPrologue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate,
                                        bool accumulating);
  std::vector<imp::Stmt> outputEpilogue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate);
  // Refuses loops that visit a level of `output` out of order, at the
  // command that made the order.
  [[noreturn]] void refuseOutputOrder(const ir::TensorVar& output, const OutputVisitOrder::Refusal& refusal) const;
  // Grows `arrays` (reallocated, contents kept), which hold `capacity` entries,
  // to hold `entries` entries (indices below it) when they do not already:
  // to twice the capacity, or to `entries` when that is more.
  imp::Stmt growToHold(const imp::Expr& capacity, const imp::Expr& entries, const std::vector<imp::Expr>& arrays);

  // lower_repeated_levels.cpp: output levels the loops revisit on
  // consecutive iterations. Their append state, declared before the loop
  // that revisits them (declared: the levels), dropped after it.
  std::vector<imp::Stmt> declareRepeatedLevels(const ir::ForallNode* forall,
                                               std::vector<std::pair<ir::TensorVar, int>>& declared);
  struct RepeatedLevelState;
  static imp::Expr revisits(const RepeatedLevelState& state, const imp::Expr& coordinate, const imp::Expr& parent);
  // outputPrologue and outputEpilogue of such a level.
  std::vector<imp::Stmt> repeatedLevelPrologue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate,
                                               bool accumulating, RepeatedLevelState& state);
  std::vector<imp::Stmt> repeatedLevelEpilogue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate,
                                               const RepeatedLevelState& state);

  // gpu/gpu_sparse_workspace.cpp: sparse workspaces under a GPU loop
  // (TensorStorage::gpuSparse): declared with the workspace's dimension
  // (`dims`, one mode); the running thread's arrays selected and emptied at
  // the start of its where; an insert (merging the list first when it is
  // full); the merge after the fill, leaving the arrays the consumer reads.
  void declareGpuThreadSparseWorkspace(const ir::TensorVar& workspace, const std::vector<imp::Expr>& dims);
  // The sparse workspace a command asked for, on the cuda target: refused
  // at that command unless it is drained (a where inside the loops),
  // inside a GPU loop, of order 1, and copied into a dense output.
  void refuseSparseWorkspaceOnGpu(const LoopCommands::Precompute& asked, const ir::TensorVar& workspace,
                                  const ir::WhereNode* where, bool drained, bool insideGpuLoop) const;
  std::vector<imp::Stmt> selectGpuThreadSparseCopy(TensorStorage& storage);
  imp::Stmt insertIntoGpuThreadSparseWorkspace(const ir::AccessNode* lhs, const imp::Expr& value);
  std::vector<imp::Stmt> mergeGpuThreadSparseWorkspace(TensorStorage& storage);

  // lower_sparse_workspace.cpp: ISM workspaces (sparse scattering).
  // A workspace compressed into `output` once, after every loop.
  void declareSparseWorkspace(const ir::TensorVar& workspace, const ir::TensorVar& output, bool perThread);
  // A workspace drained by its where after each fill (inside hoisted
  // loops, or read by a consumer that is more than a copy): the consumer
  // iterates the drained arrays as unique compressed levels. `dims` per mode.
  // Under a thread loop, one per thread (drained by the thread that fills it).
  void declareDrainedSparseWorkspace(const ir::TensorVar& workspace, const std::vector<imp::Expr>& dims,
                                     bool perThread);
  // Appends the drain and the declarations of the drained arrays, which
  // the consumer then reads (storage's pos, crd and vals).
  void drainSparseWorkspace(const ir::TensorVar& workspace, std::vector<imp::Stmt>& stmts);
  void createSparseWorkspace(const ir::TensorVar& workspace, const std::vector<imp::Expr>& modeDims, bool perThread,
                             const std::string& outputName);
  imp::Stmt insertIntoSparseWorkspace(const ir::AccessNode* lhs, const imp::Expr& value);
  // Sort, merge and compress the workspace into the output its consumer copies it to.
  imp::Stmt finishSparseWorkspace(const ir::WhereNode* where, const ir::TensorVar& workspace);
  imp::Stmt returnIfFailed(const imp::Expr& failed);

  // naming and lookup
  imp::Expr freshVar(const std::string& base, imp::Type type);
  imp::Expr dimensionOf(const ir::IndexVar& var) const;
  imp::Type valueType(const ir::TensorVar& tensor) const;
  // What a float16 input's values are read as, and what tcc computes from
  // them in: float64 where the kernel writes a float64 tensor (a float32
  // sum of two of them would round), else float32.
  imp::Type float16ReadAs_ = imp::Type::float32();
  bool isParameter(const ir::TensorVar& tensor) const;
  // A workspace as a refusal names it: the user's own by its name, one that
  // tcc inserted (its provenance says so, whatever its name) by the command
  // that asked for it, else as tcc's for Y. The second is empty for a
  // tensor tcc did not insert.
  std::string workspaceInWords(const ir::TensorVar& workspace) const;
  std::optional<std::string> insertedWorkspaceInWords(const ir::TensorVar& tensor) const;
  TensorStorage& storageOf(const ir::TensorVar& tensor);

  std::vector<ir::TensorVar> parameters_;
  LowerOptions options_;
  ir::IndexStmt statement_;  // what run() lowers
  std::map<ir::TensorVar, TensorStorage> storage_;
  std::map<ir::IndexVar, imp::Expr> coordinates_;
  std::map<ir::IndexVar, imp::Expr> dimensions_;
  std::map<const ir::AccessNode*, std::map<int, imp::Expr>> positions_;
  // (canonical access, level) -> whether the access is at the loop's
  // coordinate there; where it is not, the level below iterates nothing.
  std::map<std::pair<const ir::AccessNode*, int>, imp::Expr> emptyBelowUnless_;
  std::map<const ir::AccessNode*, std::map<int, imp::Expr>> segmentEnds_;
  // A read of a tensor at the same variables, at a loop's level and the
  // levels above it, as an earlier read that the loop iterates (A(i,k) *
  // A(i,k); A(i,j) * A(i,k) at i) -> the earlier read: one iterator serves
  // both there, and the later read's position at that level is the earlier
  // one's (set by the loop for its body; see shareIterators). Inner loops
  // that iterate only one of them (other variables below, or the two in
  // different statements of a where) keep iterators of their own.
  std::map<std::pair<const ir::AccessNode*, int>, const ir::AccessNode*> twinOf_;
  // The read whose positions_ hold `access`'s position at `level`.
  const ir::AccessNode* canonical(const ir::AccessNode* access, int level) const;
  // Drops the iterators that walk the same positions as an earlier one
  // (the same tensor and level, the same variables and unique levels down
  // to it), recording them in twinOf_ and iteratorIds_[forall]; returns the
  // (read, level) pairs it aliased.
  std::vector<std::pair<const ir::AccessNode*, int>> shareIterators(const ir::ForallNode* forall,
                                                                    std::vector<LevelIterator>& iterators);
  // The child level's append position when a compressed output segment began.
  std::map<std::pair<const ir::AccessNode*, int>, imp::Expr> segmentBegins_;
  std::set<std::string> usedNames_;
  std::vector<imp::Stmt> header_, footer_;
  // The scalar temporary that the updates of one tensor go to while a loop
  // sums into it, stored (added) to the tensor after the loop: the sum of a
  // loop whose body is one assignment with every index of its left-hand side
  // fixed outside, or a scalar summed by a CPU loop over threads or lanes
  // whose body holds a where (a sum below the statement's top), which the
  // loop reduces. An inner loop's target hides an outer one while it runs.
  struct ReductionTarget {
    ir::TensorVar tensor;
    imp::Expr temporary;
    bool defined() const { return temporary.defined(); }
    bool receives(const ir::TensorVar& updated) const { return temporary.defined() && tensor == updated; }
  };
  ReductionTarget reduction_;
  // How many stores each tensor's assignments have been lowered to, so a
  // where whose producer lowered to none of its workspace is refused
  // (lowerWhere) instead of reading a workspace nothing filled.
  std::map<ir::TensorVar, int> storesLowered_;
  imp::Expr threadCount_;  // omp_get_max_threads(), when a workspace needs per-thread copies
  // The scratch buffers of the GPU threads' workspaces (imp::Function::gpuThreadScratch).
  std::vector<imp::Function::GpuThreadScratch> gpuThreadScratch_;
  std::vector<imp::Expr> gpuSharedWorkspaces_;  // imp::Function::gpuSharedWorkspaces
  // Outputs whose rows a parallel loop assembles (OutputPass::Count / Fill,
  // or Chunk), and the variables of the loops that do.
  std::set<ir::TensorVar> rowParallelOutputs_;
  std::set<ir::IndexVar> rowParallelVars_;
  // How the loops visit the assembled outputs' levels.
  OutputVisitOrder visitOrder_;
  // A level whose coordinate the loops visit on consecutive iterations
  // appends a position only when the coordinate (or its parent position)
  // differs from the last position's; `same` is set where a level that is
  // not the last tests it (its epilogue records the position).
  struct RepeatedLevelState {
    imp::Expr lastCoordinate, lastParent, same;
  };
  std::map<std::pair<ir::TensorVar, int>, RepeatedLevelState> repeatedLevels_;
  // The one-pass form of a row-parallel output (OutputPass::Chunk), while
  // it is lowered: the output's own arrays (its storage holds the running
  // thread's meanwhile), and the chunks.
  struct ChunkedRows {
    ir::TensorVar output;
    ir::IndexVar row;                  // the parallel loop's variable
    imp::Expr crd, vals;               // the output's last level and values
    imp::Expr threadCrd, threadVals, threadCapacity, threadAppend;
    imp::Expr rowsPerChunk, chunks, state;  // state[chunks]: the next chunk to claim
    bool lowered = false;              // the parallel loop was lowered in chunks
  };
  std::optional<ChunkedRows> chunkedRows_;
  // An output (first level compressed) that the ranges of a thread loop in
  // coordinate chunks append in place: the Count pass runs each range's
  // merge without stores, counting its appends to each level into
  // `offsets`; a prefix sum over the ranges turns the counts into each
  // range's offsets; the Fill pass appends each range from its offsets
  // (each range's append positions its own) into exactly sized arrays.
  struct RangeAppendedOutput {
    ir::TensorVar output;
    ir::IndexVar var;                // the thread loop's, the output's first index
    imp::Expr ranges;                // how many ranges of var, shared by both passes
    std::vector<imp::Expr> offsets;  // per level: int64[ranges + 1] (none for a dense level)
    bool lowered = false;            // the thread loop was lowered in ranges
    // On the cuda target the ranges are the GPU loop's coordinates, one
    // each: offsets indexed by the coordinate, the appends of each
    // coordinate rebound at the output's first level (gpuCoordinateAppends).
    bool onGpu = false;
    std::vector<imp::Expr> sharedAppends;  // the output's, while a coordinate's own are bound
  };
  std::optional<RangeAppendedOutput> rangeAppended_;
  // The cuda target's form of rangeAppended_: at the output's first level,
  // a GPU iteration's coordinate appends from 0 (counting) or from its
  // offsets (filling), and the count pass stores its counts after it.
  bool appendsByGpuCoordinate(const ir::AccessNode* lhs, int level) const;
  std::vector<imp::Stmt> bindGpuCoordinateAppends(const imp::Expr& coordinate);
  std::vector<imp::Stmt> releaseGpuCoordinateAppends(const imp::Expr& coordinate);
  bool bindingGpuCoordinateAppends_ = false;  // (outputPrologue and outputEpilogue, around themselves)
  // A CSR output's rows assembled by GPU warps (a GPUWarp loop over its
  // rows, a GPUThread loop over its columns): each of a warp's lanes
  // merges a slice of the row's coordinates (gpu/lane_sliced_rows.cpp). The
  // count pass stores each lane's count in laneOffsets (int64[rows * 32 +
  // 1]), a prefix sum turns them into offsets, pos takes every row's
  // first, and the fill pass appends each slice from its lane's offset.
  struct LaneSlicedRows {
    ir::TensorVar output;
    ir::IndexVar row, column;  // the GPUWarp loop's and the GPUThread loop's variables
    imp::Expr laneOffsets;
    imp::Expr rowPosition;  // the row's position in the output, while its loop is lowered
    bool lowered = false;   // the column loop was lowered in lane slices
  };
  std::optional<LaneSlicedRows> laneSlicedRows_;
  void planLaneSlicedRows(const ir::IndexStmt& cin);
  std::vector<imp::Stmt> lowerLaneSlicedRowsInTwoPasses(const ir::IndexStmt& cin);
  // (everyCoordinate: a dense operand drives the loop, which visits every
  // coordinate of the row.)
  imp::Stmt lowerRowInLaneSlices(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                 bool everyCoordinate);
  bool slicesRowsAmongLanes(const ir::AccessNode* lhs, int level) const {
    return level == 0 && laneSlicedRows_ && laneSlicedRows_->output == lhs->tensor &&
           (pass_ == OutputPass::Count || pass_ == OutputPass::Fill);
  }
  // Outputs assembled in one pass: every row stores its end.
  std::set<ir::TensorVar> onePassOutputs_;
  // The passes of a row-parallel output in one pass, or nothing where that
  // form does not apply (onePassBound).
  std::optional<std::vector<imp::Stmt>> lowerRowsInOnePass(const ir::IndexStmt& cin);
  imp::Stmt lowerChunkedRows(const imp::Expr& row, const imp::Expr& rows, const imp::Stmt& body);
  // Outputs that a sparse workspace's Compress fills (never appended to).
  std::set<ir::TensorVar> sparseWorkspaceOutputs_;
  // Sparse outputs the kernel appends to and never reads (the statement's
  // ir::tensorsOnlyWrittenOnce): their appended coordinates and values
  // are streaming stores (imp::Store::streaming) in the passes that write
  // them in order (Fused, Fill).
  std::set<ir::TensorVar> streamedOutputs_;
  bool streamsAppendsTo(const ir::TensorVar& tensor) const {
    return streamedOutputs_.count(tensor) > 0 && (pass_ == OutputPass::Fused || pass_ == OutputPass::Fill);
  }
  // Outputs whose appends the loops being lowered reserved room for in
  // advance (reserveAppends): their appends skip the capacity test.
  std::set<ir::TensorVar> reservedOutputs_;
  // The row's own append position, while a row-parallel output row is assembled.
  std::map<const ir::AccessNode*, imp::Expr> rowAppendSaved_;  // scalar temporary a reduction loop accumulates into
  // The iterator each access contributes to a forall's loop, by forall.
  std::map<const ir::ForallNode*, std::map<const ir::AccessNode*, int>> iteratorIds_;
  int nextIteratorId_ = 0;
  bool insideParallelLoop_ = false;
  bool insideVectorLoop_ = false;
  // The innermost GPU loop kind around the loop being lowered (Serial: none).
  imp::LoopKind gpuUnit_ = imp::LoopKind::Serial;
  bool atomicStores_ = false;
  bool usesOpenMP_ = false;
  OutputPass pass_ = OutputPass::Fused;
  // The statement's provenance relations, and the one that introduced each
  // derived variable.
  std::vector<ir::ProvenanceRelation> relations_;
  std::map<ir::IndexVar, ir::ProvenanceRelation> relationOf_;
  // Ranges of derived and pos variables, declared before the outermost loop
  // that needs them.
  std::map<ir::IndexVar, LoopRange> ranges_;
  // bound(...) promises, checked when the kernel starts; and where each
  // statement variable's dimension comes from.
  std::map<ir::IndexVar, ir::BoundRelation> promisedBounds_;
  std::map<ir::IndexVar, imp::Expr> dimensionFields_;
  // Inner loops of split/divide bounded by the end of their block: no guard.
  std::set<ir::IndexVar> tightlyBounded_;
  // Inner loops of splits being lowered for a block known to be full.
  std::set<ir::IndexVar> fullBlocks_;
  // A statement variable fixed by the loops over its derived variables:
  // lowering its forall emits one iteration, not a loop.
  std::map<ir::IndexVar, imp::Expr> pinnedCoordinates_;
  // pos: the position of the access's level that the pos loops fixed.
  std::map<ir::IndexVar, PinnedPosition> pinnedPositions_;
  // Fused positions: the first level's segment holding the current position.
  std::map<ir::IndexVar, imp::Expr> segmentCursors_;
  // The coordinates [first, stop) of a variable that the running thread
  // owns (lowerOwnedRanges), by variable name: its loops visit only those.
  std::map<std::string, LoopRange> ownedRanges_;
  // The loop over a variable that stands for the inner part of its split
  // or divide, or its bound variable (coordinateBlock): refusals name the
  // command's variable, and are located at its parallelize.
  std::map<ir::IndexVar, ir::IndexVar> loopStandsFor_;
  // While lowerOwnedRanges lowers its work pass: each execution of an
  // assignment adds one to counts[the owned variable's coordinate], and an
  // innermost loop whose trip count is known adds that count at once.
  struct WorkPass {
    imp::Expr counts;  // int64 per coordinate of `owned`
    ir::IndexVar owned;
    // How often the counting part's loop over `owned` starts (the segments
    // a range searches): a local int64 of the part.
    imp::Expr scans;
  };
  std::optional<WorkPass> workPass_;
  imp::Stmt addWork(const imp::Expr& amount);
  // Whether the work pass replaces `forall`'s loop by its trip count: an
  // innermost loop (its body the assignment) over another variable than
  // the owned one, neither derived nor pinned.
  bool countsTripsOnly(const ir::ForallNode* forall) const;
  // The scalar output a CPU loop with ParallelReduction or Temporary (or
  // Atomics, see below) sums across a where in its body (every update of
  // it there adds), if any.
  std::optional<ir::TensorVar> scalarOutputReducedAcrossWhere(const ir::ForallNode* forall,
                                                              const ir::AssignmentNode* sole) const;
  // Whether a loop on CPU threads (or a GPUThread loop of a warp or block)
  // with Atomics sums into a scalar temporary of the kernel's own (the sum
  // of a term below the statement's top): its threads then keep partial
  // sums, added once after the loop, as under ParallelReduction; an atomic
  // update per iteration would give the same sum, slower (on the GPU the
  // temporary is in registers, which have no atomic update).
  bool atomicsReduceInstead(const ir::ForallNode* forall, const ir::TensorVar& tensor) const;
};

// The assignment a forall nest ends in, when the body is nothing else.
const ir::AssignmentNode* soleAssignment(const ir::IndexStmt& stmt);

}  // namespace tcc::lowering
