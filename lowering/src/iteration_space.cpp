#include "iteration_space.h"

#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_rewriter.h"

namespace tcc::lowering {

namespace {

using ir::IndexExpr;
using ir::IndexStmt;

// Reads of the producer's workspaces replaced by the producer's expression.
// A read the loop iterates itself (the workspace is indexed by the loop's
// variable, fixed around the where: the producer writes the one entry at
// it, or refills the whole workspace at each iteration) stays, multiplied by
// the producer's expression: the loop then visits its coordinates where the
// producer's own operands at the loop's variable are present too, and
// each such operand is in the lattice's points (an operand in none would be
// absent everywhere, and its producer dropped).
class InlineWorkspaces : public ir::IndexNotationRewriter {
 public:
  InlineWorkspaces(std::set<ir::TensorVar> workspaces, IndexExpr producer,
                   const std::function<bool(const ir::AccessNode*)>& inlinable)
      : workspaces_(std::move(workspaces)), producer_(std::move(producer)), inlinable_(inlinable) {}

 protected:
  using ir::IndexNotationRewriter::visit;
  IndexExpr visit(const ir::AccessNode* node, const IndexExpr& self) override {
    if (!workspaces_.count(node->tensor)) return self;
    if (inlinable_(node)) return producer_;
    return producer_.defined() ? ir::MulNode::make(self, producer_) : self;
  }

 private:
  std::set<ir::TensorVar> workspaces_;
  IndexExpr producer_;
  const std::function<bool(const ir::AccessNode*)>& inlinable_;
};

IndexExpr sum(const IndexExpr& a, const IndexExpr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return ir::AddNode::make(a, b);
}

IndexExpr zeroOf(ir::Datatype type) {
  return ir::isFloat(type) ? ir::LiteralNode::make(0.0, type) : ir::LiteralNode::makeInteger(0, type);
}

// An operand is absent when its node is listed or its tensor is a
// workspace whose producer was removed. Expressions come back undefined
// when they are zero.
class DropAbsent {
 public:
  explicit DropAbsent(std::set<const ir::AccessNode*> absent) : absent_(std::move(absent)) {}

  IndexExpr expr(const IndexExpr& e) const {
    switch (e.kind()) {
      case ir::IndexExprKind::Literal: return e;
      case ir::IndexExprKind::Access: {
        const auto* access = e.as<ir::AccessNode>();
        return absent_.count(access) || zeroTensors_.count(access->tensor) ? IndexExpr() : e;
      }
      case ir::IndexExprKind::Neg: {
        IndexExpr operand = expr(e.as<ir::NegNode>()->operand);
        if (!operand.defined()) return operand;
        return operand.sameAs(e.as<ir::NegNode>()->operand) ? e : ir::NegNode::make(operand);
      }
      case ir::IndexExprKind::Add: return binary<ir::AddNode>(e, [](IndexExpr a, IndexExpr b) {
          if (!a.defined()) return b;
          if (!b.defined()) return a;
          return ir::AddNode::make(a, b);
        });
      case ir::IndexExprKind::Sub: return binary<ir::SubNode>(e, [](IndexExpr a, IndexExpr b) {
          if (!b.defined()) return a;
          if (!a.defined()) return ir::NegNode::make(b);
          return ir::SubNode::make(a, b);
        });
      case ir::IndexExprKind::Mul: return binary<ir::MulNode>(e, [](IndexExpr a, IndexExpr b) {
          return a.defined() && b.defined() ? ir::MulNode::make(a, b) : IndexExpr();
        });
      // As in the merge lattice, a quotient lives where both operands do.
      case ir::IndexExprKind::Div: return binary<ir::DivNode>(e, [](IndexExpr a, IndexExpr b) {
          return a.defined() && b.defined() ? ir::DivNode::make(a, b) : IndexExpr();
        });
      case ir::IndexExprKind::Call: {
        // Builtins are not assumed to vanish at zero: absent arguments read as zero.
        const auto* call = e.as<ir::CallNode>();
        std::vector<ir::CallArgument> args;
        for (const auto& arg : call->args) {
          const auto* operand = std::get_if<IndexExpr>(&arg);
          if (!operand) {
            args.push_back(arg);
            continue;
          }
          IndexExpr kept = expr(*operand);
          args.push_back(kept.defined() ? kept : zeroOf(operand->type()));
        }
        return ir::CallNode::make(call->name, args);
      }
      case ir::IndexExprKind::Reduction: return e;  // concretized away before lowering
    }
    return e;
  }

  IndexStmt stmt(const IndexStmt& s) {
    switch (s.kind()) {
      case ir::IndexStmtKind::Assignment: {
        const auto* assignment = s.as<ir::AssignmentNode>();
        IndexExpr rhs = expr(assignment->rhs);
        if (rhs.sameAs(assignment->rhs)) return s;
        if (!rhs.defined()) {
          if (assignment->accumulate) return IndexStmt();
          rhs = zeroOf(assignment->lhs.tensor().datatype());
        }
        return ir::AssignmentNode::make(assignment->lhs, rhs, assignment->accumulate);
      }
      case ir::IndexStmtKind::Forall: {
        const auto* forall = s.as<ir::ForallNode>();
        IndexStmt body = stmt(forall->body);
        if (!body.defined() || body.sameAs(forall->body)) return body.defined() ? s : body;
        return ir::ForallNode::make(forall->indexVar, body, forall->attributes);
      }
      case ir::IndexStmtKind::SuchThat: {
        const auto* suchThat = s.as<ir::SuchThatNode>();
        IndexStmt body = stmt(suchThat->stmt);
        if (!body.defined() || body.sameAs(suchThat->stmt)) return body.defined() ? s : body;
        return ir::SuchThatNode::make(body, suchThat->relations);
      }
      case ir::IndexStmtKind::Where: {
        const auto* where = s.as<ir::WhereNode>();
        IndexStmt producer = stmt(where->producer);
        if (!producer.defined()) {
          // Nothing to compute: the workspaces stay zero.
          for (const auto& tensor : ir::tensorsWritten(where->producer)) zeroTensors_.insert(tensor);
          return stmt(where->consumer);
        }
        IndexStmt consumer = stmt(where->consumer);
        if (!consumer.defined()) return consumer;
        if (producer.sameAs(where->producer) && consumer.sameAs(where->consumer)) return s;
        return ir::WhereNode::make(consumer, producer);
      }
      case ir::IndexStmtKind::Sequence: {
        const auto* sequence = s.as<ir::SequenceNode>();
        return pair(s, sequence->definition, sequence->mutation, ir::SequenceNode::make);
      }
      case ir::IndexStmtKind::Multi: {
        const auto* multi = s.as<ir::MultiNode>();
        return pair(s, multi->first, multi->second, ir::MultiNode::make);
      }
    }
    return s;
  }

 private:
  template <typename Node, typename Combine>
  IndexExpr binary(const IndexExpr& e, Combine combine) const {
    const auto* node = e.as<Node>();
    IndexExpr a = expr(node->a), b = expr(node->b);
    if (a.sameAs(node->a) && b.sameAs(node->b)) return e;
    return combine(a, b);
  }

  IndexStmt pair(const IndexStmt& self, const IndexStmt& first, const IndexStmt& second,
                 IndexStmt (*make)(IndexStmt, IndexStmt)) {
    IndexStmt a = stmt(first), b = stmt(second);
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    if (a.sameAs(first) && b.sameAs(second)) return self;
    return make(a, b);
  }

  std::set<const ir::AccessNode*> absent_;
  std::set<ir::TensorVar> zeroTensors_;
};

}  // namespace

IndexExpr iterationExpression(const IndexStmt& stmt, const std::function<bool(const ir::AccessNode*)>& inlinable) {
  switch (stmt.kind()) {
    case ir::IndexStmtKind::Assignment: return stmt.as<ir::AssignmentNode>()->rhs;
    case ir::IndexStmtKind::Forall: return iterationExpression(stmt.as<ir::ForallNode>()->body, inlinable);
    case ir::IndexStmtKind::SuchThat: return iterationExpression(stmt.as<ir::SuchThatNode>()->stmt, inlinable);
    case ir::IndexStmtKind::Where: {
      const auto* where = stmt.as<ir::WhereNode>();
      std::set<ir::TensorVar> workspaces;
      for (const auto& tensor : ir::tensorsWritten(where->producer)) workspaces.insert(tensor);
      IndexExpr produced = iterationExpression(where->producer, inlinable);
      IndexExpr consumed = iterationExpression(where->consumer, inlinable);
      return InlineWorkspaces(workspaces, produced, inlinable).rewrite(consumed);
    }
    case ir::IndexStmtKind::Sequence: {
      const auto* sequence = stmt.as<ir::SequenceNode>();
      return sum(iterationExpression(sequence->definition, inlinable),
                 iterationExpression(sequence->mutation, inlinable));
    }
    case ir::IndexStmtKind::Multi: {
      const auto* multi = stmt.as<ir::MultiNode>();
      return sum(iterationExpression(multi->first, inlinable), iterationExpression(multi->second, inlinable));
    }
  }
  return IndexExpr();
}

IndexStmt withoutAbsentOperands(const IndexStmt& stmt, const std::set<const ir::AccessNode*>& absent) {
  if (absent.empty()) return stmt;
  return DropAbsent(absent).stmt(stmt);
}

}  // namespace tcc::lowering
