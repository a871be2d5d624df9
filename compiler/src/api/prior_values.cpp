#include "prior_values.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/lowering/inserted_tensor_names.h"

namespace tcc {

PriorValuesRewrite readPriorValues(const ir::IndexStmt& statement, std::set<std::string>& takenNames) {
  const auto* assignment = statement.as<ir::AssignmentNode>();
  if (!assignment) return {statement, {}};
  const ir::TensorVar& output = assignment->lhs.tensor();
  const auto read = ir::tensorsRead(assignment->rhs);
  const bool readsOutput = std::find(read.begin(), read.end(), output) != read.end();
  if (!readsOutput && !assignment->accumulate) return {statement, {}};
  ir::TensorVar prior(lowering::takeFreshName(output.name() + "_before", takenNames), output.shape(), output.format(),
                      output.datatype(), ir::TensorProvenance::priorValues(output));
  ir::IndexExpr rhs = ir::replace(assignment->rhs, std::unordered_map<ir::TensorVar, ir::TensorVar>{{output, prior}});
  if (assignment->accumulate) {
    ir::IndexExpr before = ir::AccessNode::make(prior, assignment->lhs.indices());
    rhs = ir::AddNode::make(before, rhs);
  }
  return {ir::AssignmentNode::make(assignment->lhs, rhs, false), prior};
}

void readPriorValues(lowering::ScheduleRequest& request, const PriorValuesRewrite& rewrite) {
  if (!rewrite.prior.defined()) return;
  const ir::TensorVar& output = rewrite.prior.provenance().source;  // (PriorValues provenance)
  const std::unordered_map<ir::TensorVar, ir::TensorVar> renamed{{output, rewrite.prior}};
  for (auto& command : request.commands) {
    std::visit(
        [&](auto& kind) {
          using Kind = std::decay_t<decltype(kind)>;
          if constexpr (std::is_same_v<Kind, lowering::PrecomputeCommand> ||
                        std::is_same_v<Kind, lowering::SparsePrecomputeCommand>) {
            kind.expr = ir::replace(kind.expr, renamed);
          } else if constexpr (std::is_same_v<Kind, ir::PosRelation>) {
            kind.access = ir::Access(ir::replace(kind.access, renamed));
          }
        },
        command.kind);
  }
}

}  // namespace tcc
