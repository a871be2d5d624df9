// Index variables of index notation. Two IndexVars are the same variable
// only if one is a copy of the other: identity, not name, decides equality
// (names are for printing and may repeat).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace tcc::ir {

class IndexVar {
 public:
  IndexVar();  // a fresh variable named "i<id>"
  explicit IndexVar(std::string name);

  const std::string& name() const;
  // Creation order; gives a deterministic ordering for maps and sets.
  int64_t id() const;

  bool operator==(const IndexVar& other) const { return content_ == other.content_; }
  bool operator<(const IndexVar& other) const { return id() < other.id(); }

 private:
  struct Content;
  std::shared_ptr<const Content> content_;
};

std::ostream& operator<<(std::ostream& os, const IndexVar& var);

}  // namespace tcc::ir

template <>
struct std::hash<tcc::ir::IndexVar> {
  size_t operator()(const tcc::ir::IndexVar& var) const { return std::hash<int64_t>()(var.id()); }
};
