#include "tcc/ir/index_var.h"

#include <atomic>

namespace tcc::ir {

namespace {
std::atomic<int64_t> nextIndexVarId{0};
}

struct IndexVar::Content {
  std::string name;
  int64_t id;
};

IndexVar::IndexVar() {
  int64_t id = nextIndexVarId++;
  std::string name = "i";
  name += std::to_string(id);
  content_ = std::make_shared<const Content>(Content{std::move(name), id});
}

IndexVar::IndexVar(std::string name)
    : content_(std::make_shared<const Content>(Content{std::move(name), nextIndexVarId++})) {}

const std::string& IndexVar::name() const { return content_->name; }
int64_t IndexVar::id() const { return content_->id; }

std::ostream& operator<<(std::ostream& os, const IndexVar& var) { return os << var.name(); }

}  // namespace tcc::ir
