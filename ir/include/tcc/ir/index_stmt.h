// Index statements: tensor index notation (a single Assignment) and
// concrete index notation (CIN: Forall, Where, Sequence, Multi, SuchThat
// around Assignments). Immutable nodes shared by handle, with structural
// equality and a cached hash, like index expressions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/provenance.h"

namespace tcc::ir {

enum class IndexStmtKind { Assignment, Forall, Where, Sequence, Multi, SuchThat };

struct IndexStmtNode {
  const IndexStmtKind kind;
  size_t hash = 0;  // structural hash, set by make

  virtual ~IndexStmtNode() = default;

 protected:
  explicit IndexStmtNode(IndexStmtKind kind) : kind(kind) {}
};

class IndexStmt {
 public:
  IndexStmt() = default;  // undefined
  explicit IndexStmt(std::shared_ptr<const IndexStmtNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const IndexStmtNode* get() const { return node_.get(); }
  const IndexStmtNode* operator->() const { return node_.get(); }
  IndexStmtKind kind() const { return node_->kind; }

  template <typename T>
  bool isa() const { return node_ && node_->kind == T::kKind; }
  template <typename T>
  const T* as() const { return isa<T>() ? static_cast<const T*>(node_.get()) : nullptr; }

  bool operator==(const IndexStmt& other) const;  // structural
  bool sameAs(const IndexStmt& other) const { return node_ == other.node_; }
  size_t hash() const { return node_ ? node_->hash : 0; }

 private:
  std::shared_ptr<const IndexStmtNode> node_;
};

template <typename T, IndexStmtKind K>
struct IndexStmtNodeOf : IndexStmtNode {
  static constexpr IndexStmtKind kKind = K;

 protected:
  IndexStmtNodeOf() : IndexStmtNode(K) {}
};

// lhs = rhs, or lhs += rhs when accumulate. In tensor index notation, rhs
// variables missing from lhs are summed (einsum); in CIN every variable is
// bound by an enclosing forall or sum.
struct AssignmentNode : IndexStmtNodeOf<AssignmentNode, IndexStmtKind::Assignment> {
  Access lhs;
  IndexExpr rhs;
  bool accumulate = false;

  // Throws std::invalid_argument if rhs sums over a variable of lhs.
  static IndexStmt make(Access lhs, IndexExpr rhs, bool accumulate = false);
};

// Scheduling attributes of a loop; defaults mean "serial, no unrolling".
enum class ParallelUnit { NotParallel, DefaultUnit, CPUThread, CPUVector, GPUBlock, GPUWarp, GPUThread };
// Workspace: each thread puts its results in a sparse workspace of its own,
// merged after the loop (a statement's results then go through one).
enum class OutputRaceStrategy { IgnoreRaces, NoRaces, Atomics, Temporary, ParallelReduction, Workspace };
std::string toString(ParallelUnit unit);
inline bool isGpuUnit(ParallelUnit unit) {
  return unit == ParallelUnit::GPUBlock || unit == ParallelUnit::GPUWarp || unit == ParallelUnit::GPUThread;
}
std::string toString(OutputRaceStrategy strategy);

struct ForallAttributes {
  ParallelUnit parallelUnit = ParallelUnit::NotParallel;
  OutputRaceStrategy outputRaceStrategy = OutputRaceStrategy::IgnoreRaces;
  int unrollFactor = 0;  // 0: not unrolled
  bool operator==(const ForallAttributes&) const = default;
  bool isDefault() const { return *this == ForallAttributes{}; }
  // The loop's iterations are shared among CPU threads.
  bool onThreads() const {
    return parallelUnit == ParallelUnit::CPUThread || parallelUnit == ParallelUnit::DefaultUnit;
  }
};

struct ForallNode : IndexStmtNodeOf<ForallNode, IndexStmtKind::Forall> {
  IndexVar indexVar;
  IndexStmt body;
  ForallAttributes attributes;

  static IndexStmt make(IndexVar indexVar, IndexStmt body, ForallAttributes attributes = {});
};

// The producer computes temporaries that the consumer reads.
struct WhereNode : IndexStmtNodeOf<WhereNode, IndexStmtKind::Where> {
  IndexStmt consumer, producer;

  static IndexStmt make(IndexStmt consumer, IndexStmt producer);
};

// definition writes a tensor, then mutation updates it (e.g. with +=).
struct SequenceNode : IndexStmtNodeOf<SequenceNode, IndexStmtKind::Sequence> {
  IndexStmt definition, mutation;

  static IndexStmt make(IndexStmt definition, IndexStmt mutation);
};

// Two independent statements computing different outputs.
struct MultiNode : IndexStmtNodeOf<MultiNode, IndexStmtKind::Multi> {
  IndexStmt first, second;

  static IndexStmt make(IndexStmt first, IndexStmt second);
};

// stmt such that relations hold: the provenance of scheduled variables.
struct SuchThatNode : IndexStmtNodeOf<SuchThatNode, IndexStmtKind::SuchThat> {
  IndexStmt stmt;
  std::vector<ProvenanceRelation> relations;

  static IndexStmt make(IndexStmt stmt, std::vector<ProvenanceRelation> relations);
};

}  // namespace tcc::ir

template <>
struct std::hash<tcc::ir::IndexStmt> {
  size_t operator()(const tcc::ir::IndexStmt& stmt) const { return stmt.hash(); }
};
