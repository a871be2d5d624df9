// Dispatching over the table of intrinsics (intrinsics/registry.cpp):
// recognition before the loop lowering, explain text, the C++ expansion.
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

namespace imp = ir::imp;

const IntrinsicLowering* intrinsicLowering(const std::string& name) {
  for (const auto& entry : intrinsicLowerings())
    if (name == entry.name) return &entry;
  return nullptr;
}

std::optional<imp::Function> lowerIntrinsic(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                            const LowerOptions& options) {
  for (const auto& entry : intrinsicLowerings())
    if (auto function = entry.recognize(cin, parameters, options)) return function;
  return std::nullopt;
}

const imp::Intrinsic* intrinsicOf(const imp::Function& function) {
  const auto* block = function.body.as<imp::Block>();
  if (!block) return function.body.as<imp::Intrinsic>();
  for (const auto& stmt : block->stmts)
    if (const auto* intrinsic = stmt.as<imp::Intrinsic>()) return intrinsic;
  return nullptr;
}

std::optional<std::string> intrinsicDecision(const imp::Function& function) {
  const imp::Intrinsic* op = intrinsicOf(function);
  if (!op) return std::nullopt;
  const IntrinsicLowering* entry = intrinsicLowering(op->name);
  if (!entry || !entry->explain) return std::nullopt;
  return entry->explain(function, *op);
}

std::string cppIntrinsicStatement(const imp::Intrinsic& intrinsic) {
  const IntrinsicLowering* entry = intrinsicLowering(intrinsic.name);
  if (!entry || !entry->cppStatement)
    throw LoweringError("intrinsic '" + intrinsic.name + "' has no C++ expansion; it runs on the cuda target only");
  return entry->cppStatement(intrinsic);
}

imp::ScalarKind intrinsicValueKind(const ir::TensorVar& tensor, bool allowFloat16) {
  switch (tensor.datatype()) {
    case ir::Datatype::Float64: return imp::ScalarKind::Float64;
    case ir::Datatype::Float32: return imp::ScalarKind::Float32;
    case ir::Datatype::Int32: return imp::ScalarKind::Int32;
    case ir::Datatype::Int64: return imp::ScalarKind::Int64;
    case ir::Datatype::Float16:
      if (allowFloat16) return imp::ScalarKind::Float16;
      break;
  }
  throw LoweringError("tensor " + tensor.name() + " is float16, which is a storage-only type on the CPU");
}

}  // namespace tcc::lowering
