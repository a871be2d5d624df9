// The lowerer's state, shared by its translation units (lower_loops.cpp:
// foralls, merge-lattice loops, where-statements; lower_storage.cpp: tensor
// arrays, output assembly, expressions and stores). See tcc/lowering/lower.h.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "merge_lattice.h"
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
  // Dense workspaces with a list of touched coordinates.
  imp::Expr list, listSize, flags;
  imp::Expr scalar;  // order-0 workspace
};

// Which parts of an assembled (sparse) output a lowering pass writes.
enum class OutputPass {
  Fused,     // coordinates and values together, growing arrays as needed
  Assemble,  // pos and crd only
  Compute,   // values only, into arrays the assemble pass sized
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
  imp::Stmt lowerAssignment(const ir::AssignmentNode* assignment);
  imp::Stmt lowerLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                      const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  imp::Stmt lowerDenseDrivenLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                 const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  imp::Stmt lowerSparseDrivenLoops(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                   const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole);
  // The loop kind a forall's attributes ask for, after checking that the
  // loop can run that way (no races under NoRaces, no shared cursors).
  imp::LoopKind loopKindOf(const ir::ForallNode* forall);
  // Loops over the outer and inner variables of a split.
  imp::Stmt lowerSplitLoop(const ir::ForallNode* forall);
  ir::IndexVar splitParentOf(const ir::IndexVar& var) const;
  void requireParallelizable(const ir::ForallNode* forall, bool condition, const std::string& reason) const;
  // The statements for one lattice point, with the point's expression.
  imp::Stmt lowerCase(const ir::ForallNode* forall, const LatticePoint& point, const ir::AssignmentNode* sole);
  std::vector<imp::Stmt> locateDenseIterators(std::vector<LevelIterator>& iterators, const imp::Expr& coordinate);
  std::vector<imp::Stmt> initializeSparseIterator(LevelIterator& iterator);
  std::vector<imp::Stmt> readCoordinate(LevelIterator& iterator);
  std::vector<imp::Stmt> findSegmentEnd(LevelIterator& iterator);
  imp::Stmt advance(const LevelIterator& iterator, const imp::Expr& coordinate);

  // lower_storage.cpp
  void declareTensor(const ir::TensorVar& tensor, bool isOutput);
  void declareWorkspace(const ir::TensorVar& workspace, bool withList);
  void finishOutputs();
  imp::Expr parentPosition(const ir::AccessNode* access, int level) const;
  imp::Expr positionOf(const ir::AccessNode* access);
  imp::Expr lowerExpr(const ir::IndexExpr& expr);
  imp::Stmt store(const ir::AssignmentNode* assignment, imp::Expr value, bool accumulate);
  // Output levels bound by the current forall: before and after a case body.
  std::vector<imp::Stmt> outputPrologue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate,
                                        bool accumulating);
  std::vector<imp::Stmt> outputEpilogue(const ir::AccessNode* lhs, int level, const imp::Expr& coordinate);
  imp::Stmt growIfNeeded(const imp::Expr& capacity, const imp::Expr& index, const std::vector<imp::Expr>& arrays);

  // naming and lookup
  imp::Expr freshVar(const std::string& base, imp::Type type);
  imp::Expr dimensionOf(const ir::IndexVar& var) const;
  imp::Type valueType(const ir::TensorVar& tensor) const;
  bool isParameter(const ir::TensorVar& tensor) const;
  TensorStorage& storageOf(const ir::TensorVar& tensor);

  std::vector<ir::TensorVar> parameters_;
  LowerOptions options_;
  std::map<ir::TensorVar, TensorStorage> storage_;
  std::map<ir::IndexVar, imp::Expr> coordinates_;
  std::map<ir::IndexVar, imp::Expr> dimensions_;
  std::map<const ir::AccessNode*, std::map<int, imp::Expr>> positions_;
  std::map<const ir::AccessNode*, std::map<int, imp::Expr>> segmentEnds_;
  // The child level's append position when a compressed output segment began.
  std::map<std::pair<const ir::AccessNode*, int>, imp::Expr> segmentBegins_;
  std::set<std::string> usedNames_;
  std::vector<imp::Stmt> header_, footer_;
  imp::Expr reductionTarget_;  // scalar temporary a reduction loop accumulates into
  int nextIteratorId_ = 0;
  bool insideParallelLoop_ = false;
  bool usesOpenMP_ = false;
  OutputPass pass_ = OutputPass::Fused;
  std::map<ir::IndexVar, ir::SplitRelation> splitOfOuter_, splitOfInner_;
  // A split's parent variable, fixed by the loops over its outer and inner
  // variables: lowering its forall emits one guarded iteration, not a loop.
  std::map<ir::IndexVar, imp::Expr> pinnedCoordinates_;
};

// The assignment a forall nest ends in, when the body is nothing else.
const ir::AssignmentNode* soleAssignment(const ir::IndexStmt& stmt);

}  // namespace tcc::lowering
