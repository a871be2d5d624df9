// Applies scheduling commands to a perfect loop nest over one assignment,
// the way TACO's iteration-space transformations rewrite concrete index
// notation: split, divide, fuse, pos and bound replace loops by derived ones
// and record the provenance relation that recovers the originals; reorder
// permutes loops; parallelize and unroll set loop attributes; precompute is
// kept for buildConcreteNest, which places its where-statement. Every
// command is checked against the loops as they stand when it runs.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// `above` is stored directly above `below` by a sparse tensor (`owner`), so
// the loops over `above` must enclose every loop over `below`.
struct StorageEdge {
  ir::IndexVar above, below;
  std::string owner;
};

// One precompute into a dense workspace.
struct NestPrecompute {
  PrecomputeCommand command;
  // The command that asked for it, for locating refusals; none when the
  // compiler inserted the workspace itself.
  std::optional<size_t> commandIndex;
  std::string text;           // as written; empty with no command
  std::string workspaceName;  // w_A for a statement's first, then w_A_2, ...
};

// A name for a dense workspace of `output`'s statement: w_Y for the first,
// then w_Y_2, ..., skipping (and then adding to) the names `taken` holds.
std::string denseWorkspaceName(const ir::TensorVar& output, std::set<std::string>& taken);

// Why `precompute` cannot join the statement's `earlier` ones, if it cannot:
// it precomputes the same part again, or its workspace's index takes a name
// an earlier workspace's index has over another variable (nested, the two
// would name loops over different variables alike). `readAs` maps reads of
// inputs' copies in the loops' order to the accesses as written.
std::optional<std::string> clashWithEarlierPrecomputes(
  const std::vector<NestPrecompute>& earlier, const PrecomputeCommand& precompute,
  const std::unordered_map<ir::IndexExpr, ir::IndexExpr>& readAs = {});

struct LoopNest {
  std::vector<ir::IndexVar> loops;  // outermost first
  std::map<ir::IndexVar, ir::ForallAttributes> attributes;
  std::vector<ir::ProvenanceRelation> relations;
  // In the order the schedule asks for them. Each is placed in the part of
  // the statement the ones before it left holding its expression: inside
  // an earlier workspace's expression (a where in that workspace's
  // producer), or in the rest (a where in its consumer).
  std::vector<NestPrecompute> precomputes;
  // sparse_workspace(...): the statement goes through an ISM workspace.
  std::optional<SparseWorkspaceCommand> sparseWorkspace;
  std::optional<size_t> sparseWorkspaceCommand;  // its index in the request, for refusals
  std::string sparseWorkspaceText;               // as written; empty with no command
  // The sparse workspaces the concrete nest uses, by name (for the lowerer).
  std::map<std::string, SparseWorkspaceOptions> sparseWorkspaceOptions;
  std::vector<std::string> decisions;  // for `tcc explain`
  // The reads of inputs converted into copies in the loops' order, each
  // copy's access to the user's, for the refusals to name the user's.
  std::unordered_map<ir::IndexExpr, ir::IndexExpr> readAs;
  // Variables of the statement that a command may name but that have no
  // loop in this nest, each with why (a precompute into a workspace tensor
  // renamed it where the workspace is filled), for the refusal.
  std::map<ir::IndexVar, std::string> absentBecause;
  // The names the workspaces tcc inserts into the nest must not take: the
  // program's tensors' and the copies' (takeFreshName adds each name a
  // workspace takes).
  std::set<std::string> takenNames;

  // The statement's own variables a loop variable derives from (itself if
  // it is one): i0 -> {i}, fuse(i, j, f) -> {i, j}.
  std::set<ir::IndexVar> originsOf(const ir::IndexVar& var) const;
};

// Throws ScheduleError naming the offending command.
void applySchedule(LoopNest& nest, const std::vector<ScheduleCommand>& commands, const ir::AssignmentNode& assignment,
                   const std::vector<StorageEdge>& inputEdges);

// The first edge the loop order breaks, if any: some loop over `below`
// runs outside a loop over `above`.
std::optional<StorageEdge> brokenEdge(const LoopNest& nest, const std::vector<StorageEdge>& edges);

// Foralls over the nest's loops around `lhs = rhs` (a where-statement for
// each of the nest's precomputes), wrapped in the relations. Throws
// LoweringError when the precomputed expression is not part of `rhs`.
// `enclosing`: the variables loops around the nest fix (a sum's loops inside
// the loops over the output's indices); both the workspace and the rest of
// `rhs` read them at one value. `addsToOtherNests`: `lhs` holds what other
// loop nests added already (a term of a sum adding into a dense output in
// a nest of its own), so every store into it adds, a workspace's copy too.
ir::IndexStmt buildConcreteNest(LoopNest& nest, const ir::Access& lhs, const ir::IndexExpr& rhs, bool accumulate,
                                const std::vector<ir::IndexVar>& enclosing = {}, bool addsToOtherNests = false);

// Foralls over `loops` that insert `rhs` into the sparse (ISM) workspace
// access `workspace`, with a where-statement for each of the nest's
// precomputes among them (a dense workspace filled inside the loops that
// fill the sparse one), each workspace made for `output`; no relations
// around. `enclosing`: the variables loops around `loops` fix (a hoisted
// level's).
ir::IndexStmt placePrecomputesInSparseFill(LoopNest& nest, const std::vector<ir::IndexVar>& loops,
                                           const ir::Access& workspace, const ir::IndexExpr& rhs,
                                           const ir::TensorVar& output, const std::vector<ir::IndexVar>& enclosing);

// Foralls over the nest's loops that insert `rhs` into a sparse (ISM)
// workspace holding the whole output, in a where whose consumer copies it
// into `lhs`; records the workspace's options and, in the decisions, the
// statement's classification and why this workspace was chosen. `scatters`
// says how the loop order scatters (none when sparse_workspace asked).
ir::IndexStmt buildSparseWorkspaceNest(LoopNest& nest, const ir::Access& lhs, const ir::IndexExpr& rhs,
                                       const std::optional<std::string>& scatters);

// On the cuda target, sparse_workspace(...) for a dense `lhs` whose
// workspace a GPU thread's own list cannot hold (its where would stand
// outside every GPU loop or between GPU loops, or it would hold two or
// more of the output's levels): the loops add into `lhs` directly, with
// their race strategies, as without the command (which is dropped from
// `nest`, the decision recorded). False, `nest` untouched, where each GPU
// thread keeps a list of its own (order 1, its where inside a GPU loop, no
// GPU loop inside it), where no command asked, or where `lhs` has a
// sparse level.
bool takeWorkspaceIntoDenseOutputOnGpu(LoopNest& nest, const ir::Access& lhs);
// " (its options, policy hash, pipelined, describe ...)": what explain says of
// the options of the nest's sparse_workspace(...) where the cuda target
// makes no workspace of it; empty where it gives none.
std::string workspaceOptionsIgnoredOnGpu(const LoopNest& nest);

// One term of a sum whose terms reduce over different variables: the loops
// that insert it into the workspace and the (signed) value they insert.
struct WorkspaceTerm {
  std::vector<ir::IndexVar> loops;  // outermost first
  ir::IndexExpr value;
  std::vector<ir::IndexVar> summed;  // the term's own reduction variables
};

// A sparse (ISM) workspace holding the whole output that every term fills
// in a loop nest of its own (the workspace adds repeated coordinates), in a
// where whose consumer compresses it into `lhs` once. `command` carries a
// sparse_workspace(...)'s options, if the schedule gave one; the options
// and the decisions are recorded in `nest`.
ir::IndexStmt buildTermwiseSparseWorkspace(LoopNest& nest, const ir::Access& lhs,
                                           const std::vector<WorkspaceTerm>& terms);

// The form of the same for a dense `lhs` that needs no workspace: a
// sequence of the terms' loop nests, each adding into `lhs` itself; the
// decisions (worded for the target) are recorded in `nest`.
ir::IndexStmt buildTermwiseAccumulation(LoopNest& nest, const ir::Access& lhs, const std::vector<WorkspaceTerm>& terms,
                                        bool cudaTarget);

// The options of a sparse workspace: `given` when the policy was given,
// else `given` with the policy tcc's documented rule picks for `workspace`;
// `why` says which and why, for explain.
SparseWorkspaceOptions chosenWorkspaceOptions(const ir::TensorVar& workspace, SparseWorkspaceOptions given,
                                              bool policyGiven, std::string& why);
// ", pipelined, first capacity 16": the options explain mentions.
std::string workspaceOptionFlags(const SparseWorkspaceOptions& options);

// "A's compressed level 2 stores": the sparse levels of `reads` that
// iterate `var`, whose blocks a split's, divide's or bound's loops search
// (an input's copy in the loops' order named as such), for explain; empty
// when none does, or when one is not ordered compressed (no block is
// searched then).
std::string searchedLevelsText(const ir::IndexVar& var, const std::vector<ir::Access>& reads);
// What explain says of a split or divide: with `levels` (searchedLevelsText)
// the inner part visits the block's stored coordinates; without, the
// parent is recovered from its parts.
std::string splitDecision(const ir::SplitRelation& split, const std::string& levels);
std::string divideDecision(const ir::DivideRelation& divide, const std::string& levels);
// A bound: the loop cut at the bound (guarded, or a promise that it is the
// dimension); where `levels` iterate the variable, the whole level, the
// bound a promise checked when the kernel starts.
std::string boundDecision(const ir::BoundRelation& bound, const std::string& levels);

// Why `var` cannot be cut into ranges (split, divide, bound, a fuse that
// pos does not follow): a sparse level of one of `accesses` iterates it.
// A copy in the loops' order is named as the copy of its input. With
// `searchedBlocks` (split, divide, bound), ordered compressed levels are
// allowed: their coordinates in a block are found by binary search.
std::optional<std::string> sparseIterationRefusal(const ir::IndexVar& var, const std::vector<ir::Access>& accesses,
                                                  bool searchedBlocks = false);
// Why pos cannot take `pos.indexVar`, derived by `fuse` (null: by no fuse),
// as the fusion of the access's first two levels. `derivation` says how it
// was derived ("derived from k by `split(k, k0, k1, 4)` at line 6").
std::optional<std::string> fusedPositionRefusal(const ir::PosRelation& pos, const ir::FuseRelation* fuse,
                                                const std::string& derivation);
// Why pos cannot iterate the positions of the access's level that stores
// `stored`: none stores it, or that level is not unique compressed.
std::optional<std::string> positionLevelRefusal(const ir::PosRelation& pos, const ir::IndexVar& stored);

// "i, k, j": variable names for messages.
std::string joinNames(const std::vector<ir::IndexVar>& vars);

// Foralls over `loops`, outermost first, with their attributes.
ir::IndexStmt nestLoops(const std::vector<ir::IndexVar>& loops, ir::IndexStmt body,
                        const std::map<ir::IndexVar, ir::ForallAttributes>& attributes);

}  // namespace tcc::lowering
