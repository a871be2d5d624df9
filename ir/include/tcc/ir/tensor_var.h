// Tensor variables of index notation: a name, a shape, a storage format and
// an element type, and what made the tensor (its provenance: the user, or
// one of tcc's steps). A TensorVar is a shared handle; copies denote the
// same tensor, and equality is identity.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tcc/ir/format.h"
#include "tcc/ir/index_var.h"

namespace tcc::ir {

class AssignableAccess;
struct TensorProvenance;

// The size of one mode: a fixed number, a named symbol bound at run time
// (tensors sharing a symbol share the size), or unknown (bound at run time
// from the data).
class Dimension {
 public:
  Dimension() = default;  // unknown
  template <std::integral T>
  Dimension(T size) : Dimension(static_cast<int64_t>(size), FixedTag{}) {}
  Dimension(std::string symbol);
  Dimension(const char* symbol) : Dimension(std::string(symbol)) {}

  bool isFixed() const { return size_.has_value(); }
  bool isSymbolic() const { return !symbol_.empty(); }
  bool isUnknown() const { return !isFixed() && !isSymbolic(); }
  int64_t size() const;  // only when isFixed()
  const std::string& symbol() const { return symbol_; }

  std::string toString() const;  // "4", "I" or "?"
  bool operator==(const Dimension&) const = default;

 private:
  struct FixedTag {};
  Dimension(int64_t size, FixedTag);
  std::optional<int64_t> size_;
  std::string symbol_;
};

class TensorVar {
 public:
  TensorVar();  // undefined
  // A scalar: order 0, no levels.
  explicit TensorVar(std::string name, Datatype type = Datatype::Float64);
  // A tensor of shape.size() modes; the format defaults to all dense.
  TensorVar(std::string name, std::vector<Dimension> shape, Datatype type = Datatype::Float64);
  TensorVar(std::string name, std::vector<Dimension> shape, Format format,
            Datatype type = Datatype::Float64);
  // A tensor tcc makes while it compiles (the constructors above make the
  // user's); a scalar has no shape and Format().
  TensorVar(std::string name, std::vector<Dimension> shape, Format format, Datatype type,
            TensorProvenance provenance);

  bool defined() const { return content_ != nullptr; }
  const std::string& name() const;
  int order() const;
  const std::vector<Dimension>& shape() const;
  const Dimension& dimension(int mode) const;
  const Format& format() const;
  Datatype datatype() const;
  bool isScalar() const { return order() == 0; }
  int64_t id() const;  // creation order
  // What made the tensor. Messages say what tcc's own tensors are for
  // from it, never from their names, which a user may choose alike. It is
  // no part of the tensor's identity: equality, ordering and hashing stay
  // those of the handle, and nothing printed shows it.
  const TensorProvenance& provenance() const;

  // Builder: A(i, j) and A() for a scalar; the count must match order().
  AssignableAccess operator()(const std::vector<IndexVar>& indices) const;
  template <std::same_as<IndexVar>... Vars>
  AssignableAccess operator()(const Vars&... indices) const;

  bool operator==(const TensorVar& other) const { return content_ == other.content_; }
  bool operator<(const TensorVar& other) const { return id() < other.id(); }

 private:
  struct Content;
  std::shared_ptr<const Content> content_;
};

// What made a tensor, and from or for which tensor.
struct TensorProvenance {
  enum class Kind {
    User,              // declared in a program or built through the API (the default)
    StorageOrderCopy,  // the input `source` copied into the loops' order (X_by_...)
    DenseCopy,         // the N:M input `source` read from a dense copy (X_dense)
    DenseWorkspace,    // a dense workspace that `source`, an output, is computed through (w_Y)
    SparseWorkspace,   // a sparse (insert-sort-merge) workspace for the output `source` (ws_Y)
    SumTemporary,      // the scalar a sum below a statement's top is computed into (t...)
    ComputedOutput,    // the output `source` in the format it is computed in, converted after
    PriorValues,       // the output `source`'s values from before the statement that reads them (X_before)
  };
  Kind kind = Kind::User;
  TensorVar source;  // undefined for User and SumTemporary
  // A workspace's: the schedule command that asked for it, as written;
  // empty when tcc chose the workspace itself.
  std::string askedBy;

  static TensorProvenance user() { return {}; }
  static TensorProvenance storageOrderCopy(const TensorVar& input) { return {Kind::StorageOrderCopy, input, {}}; }
  static TensorProvenance denseCopy(const TensorVar& input) { return {Kind::DenseCopy, input, {}}; }
  static TensorProvenance denseWorkspace(const TensorVar& output, std::string askedBy) {
    return {Kind::DenseWorkspace, output, std::move(askedBy)};
  }
  static TensorProvenance sparseWorkspace(const TensorVar& output, std::string askedBy) {
    return {Kind::SparseWorkspace, output, std::move(askedBy)};
  }
  static TensorProvenance sumTemporary() { return {Kind::SumTemporary, {}, {}}; }
  static TensorProvenance computedOutput(const TensorVar& output) { return {Kind::ComputedOutput, output, {}}; }
  static TensorProvenance priorValues(const TensorVar& output) { return {Kind::PriorValues, output, {}}; }

  bool isUser() const { return kind == Kind::User; }
  bool isWorkspace() const { return kind == Kind::DenseWorkspace || kind == Kind::SparseWorkspace; }
};

// "A(I, J) : {dense, compressed} of float64"
std::string declarationString(const TensorVar& tensor);
std::ostream& operator<<(std::ostream& os, const TensorVar& tensor);
std::ostream& operator<<(std::ostream& os, const Dimension& dimension);

}  // namespace tcc::ir

template <>
struct std::hash<tcc::ir::TensorVar> {
  size_t operator()(const tcc::ir::TensorVar& tensor) const {
    return std::hash<int64_t>()(tensor.id());
  }
};
