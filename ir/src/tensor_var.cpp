#include "tcc/ir/tensor_var.h"

#include <atomic>
#include <stdexcept>

#include "tcc/ir/index_expr.h"

namespace tcc::ir {

namespace {
std::atomic<int64_t> nextTensorVarId{0};
}

Dimension::Dimension(int64_t size, FixedTag) : size_(size) {
  if (size < 0) throw std::invalid_argument("dimension: negative size " + std::to_string(size));
}

Dimension::Dimension(std::string symbol) : symbol_(std::move(symbol)) {
  if (symbol_.empty()) throw std::invalid_argument("dimension: empty symbol");
}

int64_t Dimension::size() const {
  if (!size_) throw std::logic_error("dimension " + toString() + " has no fixed size");
  return *size_;
}

std::string Dimension::toString() const {
  if (isFixed()) return std::to_string(*size_);
  if (isSymbolic()) return symbol_;
  return "?";
}

struct TensorVar::Content {
  std::string name;
  std::vector<Dimension> shape;
  Format format;
  Datatype type;
  int64_t id;
  TensorProvenance provenance;
};

TensorVar::TensorVar() = default;

TensorVar::TensorVar(std::string name, Datatype type) : TensorVar(std::move(name), {}, Format(), type) {}

TensorVar::TensorVar(std::string name, std::vector<Dimension> shape, Datatype type)
    : TensorVar(std::move(name), shape, Format::denseOfOrder(static_cast<int>(shape.size())), type) {}

TensorVar::TensorVar(std::string name, std::vector<Dimension> shape, Format format, Datatype type)
    : TensorVar(std::move(name), std::move(shape), std::move(format), type, TensorProvenance::user()) {}

TensorVar::TensorVar(std::string name, std::vector<Dimension> shape, Format format, Datatype type,
                     TensorProvenance provenance) {
  if (name.empty()) throw std::invalid_argument("tensor: empty name");
  if (static_cast<int>(shape.size()) != format.order())
    throw std::invalid_argument("tensor " + name + ": format " + format.toString() + " has " +
                                std::to_string(format.order()) + " levels for " +
                                std::to_string(shape.size()) + " modes");
  content_ = std::make_shared<const Content>(
      Content{std::move(name), std::move(shape), std::move(format), type, nextTensorVarId++, std::move(provenance)});
}

const std::string& TensorVar::name() const { return content_->name; }
int TensorVar::order() const { return static_cast<int>(content_->shape.size()); }
const std::vector<Dimension>& TensorVar::shape() const { return content_->shape; }
const Dimension& TensorVar::dimension(int mode) const { return content_->shape.at(mode); }
const Format& TensorVar::format() const { return content_->format; }
Datatype TensorVar::datatype() const { return content_->type; }
int64_t TensorVar::id() const { return content_ ? content_->id : -1; }
const TensorProvenance& TensorVar::provenance() const {
  static const TensorProvenance undefined;
  return content_ ? content_->provenance : undefined;
}

AssignableAccess TensorVar::operator()(const std::vector<IndexVar>& indices) const {
  return AssignableAccess(AccessNode::make(*this, indices));
}

std::string declarationString(const TensorVar& tensor) {
  std::string text = tensor.name();
  if (!tensor.isScalar()) {
    text += "(";
    for (int mode = 0; mode < tensor.order(); ++mode)
      text += (mode ? ", " : "") + tensor.dimension(mode).toString();
    text += ")";
  }
  return text + " : " + tensor.format().toString() + " of " + toString(tensor.datatype());
}

std::ostream& operator<<(std::ostream& os, const TensorVar& tensor) { return os << tensor.name(); }
std::ostream& operator<<(std::ostream& os, const Dimension& dimension) {
  return os << dimension.toString();
}

}  // namespace tcc::ir
