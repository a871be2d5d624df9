#include "output_visit_order.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_visitor.h"

namespace tcc::lowering {

namespace {

// A variable as a function of the loops around it: the loops' values read
// as one number, most significant digit first.
struct Key;
using KeyRef = std::shared_ptr<const Key>;
struct Key {
  enum class Kind {
    Loop,       // the loop at `loop` (outermost 0)
    Pair,       // (first, second), first most significant: split, divide
    Repeating,  // first, each value possibly on several consecutive iterations (pos of a non-unique level)
    // A digit of `first` (a loop, pair or repeating value): all of it for
    // an empty path; a fuse of a digit makes two, its path followed by 'H'
    // (the high part: the fuse's outer variable) and by 'L' (the low part).
    Digit,
  } kind = Kind::Loop;
  size_t loop = 0;
  std::string path;
  KeyRef first, second;
};

KeyRef make(Key::Kind kind, KeyRef first, KeyRef second = nullptr, std::string path = "") {
  auto key = std::make_shared<Key>();
  key->kind = kind;
  key->first = std::move(first);
  key->second = std::move(second);
  key->path = std::move(path);
  return key;
}

KeyRef loopKey(size_t loop) {
  auto key = std::make_shared<Key>();
  key->kind = Key::Kind::Loop;
  key->loop = loop;
  return make(Key::Kind::Digit, key);
}

// The outer and inner variables of a fuse of `fused`.
std::pair<KeyRef, KeyRef> fusedParts(const KeyRef& fused) {
  if (fused->kind == Key::Kind::Digit)
    return {make(Key::Kind::Digit, fused->first, nullptr, fused->path + "H"),
            make(Key::Kind::Digit, fused->first, nullptr, fused->path + "L")};
  return {make(Key::Kind::Digit, fused, nullptr, "H"), make(Key::Kind::Digit, fused, nullptr, "L")};
}

// The digits of a key, most significant first.
std::vector<KeyRef> digits(const KeyRef& key) {
  std::vector<KeyRef> out;
  if (key->kind == Key::Kind::Pair) {
    for (const auto& part : {key->first, key->second}) {
      auto inner = digits(part);
      out.insert(out.end(), inner.begin(), inner.end());
    }
    return out;
  }
  return {key};
}

// Where reading digits in order has got to: every digit before the digit
// `path` of loop `loop` is read.
struct Cursor {
  size_t loop = 0;
  std::string path;
};

// Whether the digit `path` of `loop` is the most significant one left.
bool readsNext(const Cursor& cursor, size_t loop, const std::string& path) {
  return loop == cursor.loop && path.compare(0, cursor.path.size(), cursor.path) == 0 &&
         std::all_of(path.begin() + static_cast<long>(std::min(cursor.path.size(), path.size())), path.end(),
                     [](char part) { return part == 'H'; });
}

// Past the digit `path` of `loop`: its low sibling, or its parent's, or the
// next loop.
Cursor after(size_t loop, std::string path) {
  while (!path.empty() && path.back() == 'L') path.pop_back();
  if (path.empty()) return {loop + 1, ""};
  path.back() = 'L';
  return {loop, path};
}

struct Visits {
  Cursor cursor;
  // The loop whose iterations repeat the value, when it is not one to one.
  std::optional<size_t> repeatsFrom;
};

// Whether `terms` read the loops' digits in order from `cursor` on: each
// digit the most significant one left (the rest of a loop read in part
// repeats the value on consecutive iterations), and at most one last term
// that is a coarser (monotone) function of the digits after them: some
// high digits of a pair or a repeating value, or a repeating value.
// Loops of one iteration (`single`: split(i, i0, i1, 1)'s inner loop, say)
// hold one value, read in any order.
std::optional<Visits> visitsInOrder(const std::vector<KeyRef>& terms, Cursor cursor, const std::set<size_t>& single) {
  for (size_t t = 0; t < terms.size(); ++t) {
    const Key& term = *terms[t];
    KeyRef coarse;
    if (term.kind == Key::Kind::Digit && term.first->kind == Key::Kind::Loop) {
      if (single.count(term.first->loop) && term.path.empty()) continue;
      while (cursor.path.empty() && single.count(cursor.loop) && cursor.loop != term.first->loop) ++cursor.loop;
      if (!readsNext(cursor, term.first->loop, term.path)) return std::nullopt;
      cursor = after(term.first->loop, term.path);
      continue;
    }
    if (term.kind == Key::Kind::Digit) {
      // Digits of one pair or repeating value, read as that value's own
      // digits: all of them stand for it; some of them, for a coarser value.
      KeyRef whole = term.first;
      Cursor own;
      size_t end = t;
      for (; end < terms.size() && terms[end]->kind == Key::Kind::Digit && terms[end]->first == whole; ++end) {
        if (own.loop != 0 || !readsNext(own, 0, terms[end]->path)) return std::nullopt;
        own = after(0, terms[end]->path);
      }
      if (own.loop == 1) {
        std::vector<KeyRef> rest = digits(whole);
        rest.insert(rest.end(), terms.begin() + static_cast<long>(end), terms.end());
        return visitsInOrder(rest, cursor, single);
      }
      if (end != terms.size()) return std::nullopt;
      coarse = whole;
    } else if (term.kind == Key::Kind::Repeating && t + 1 == terms.size()) {
      coarse = term.first;
    } else {
      return std::nullopt;
    }
    size_t from = cursor.loop;
    auto inner = visitsInOrder(digits(coarse), cursor, single);
    if (!inner) return std::nullopt;
    return Visits{inner->cursor, from};
  }
  if (cursor.path.empty()) return Visits{cursor, std::nullopt};
  return Visits{cursor, cursor.loop};
}

class OrderChecker : public ir::IndexNotationVisitor {
 public:
  OrderChecker(const std::vector<ir::ProvenanceRelation>& relations,
               const std::function<bool(const ir::TensorVar&)>& assembled)
      : relations_(relations), assembled_(assembled) {}

  OutputVisitOrder result;

 protected:
  using ir::IndexNotationVisitor::visit;
  void visit(const ir::ForallNode* node) override {
    loops_.push_back(node->indexVar);
    ir::IndexNotationVisitor::visit(node);
    loops_.pop_back();
  }

  void visit(const ir::AssignmentNode* node) override {
    const ir::TensorVar& tensor = node->lhs.tensor();
    if (tensor.order() == 0 || tensor.format().isAllDense() || !assembled_(tensor)) return;
    std::map<ir::IndexVar, KeyRef> keys = keysOfVariables();
    std::set<size_t> single = singleIterationLoops();
    const ir::Format& format = tensor.format();
    std::vector<KeyRef> prefix;
    bool known = true;
    for (int level = 0; level < format.order(); ++level) {
      const ir::IndexVar& var = node->lhs.indices()[format.modeOfLevel(level)];
      auto key = keys.find(var);
      known = known && key != keys.end();
      if (known) {
        auto more = digits(key->second);
        prefix.insert(prefix.end(), more.begin(), more.end());
      }
      auto visits = known ? visitsInOrder(prefix, Cursor{}, single) : std::nullopt;
      if (!visits) {
        if (format.level(level).isDense()) continue;
        result.outOfOrderLevels.emplace(std::make_pair(tensor, level), outOfOrder(node->lhs, level));
        return;
      }
      if (visits->repeatsFrom)
        result.repeatedLevels.emplace(std::make_pair(tensor, level), loops_[*visits->repeatsFrom]);
    }
  }

 private:
  std::map<ir::IndexVar, KeyRef> keysOfVariables() const {
    std::map<ir::IndexVar, KeyRef> keys;
    for (size_t loop = 0; loop < loops_.size(); ++loop) keys[loops_[loop]] = loopKey(loop);
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& relation : relations_) {
        bool derivedKnown = true, parentsKnown = true;
        for (const auto& var : ir::derivedVars(relation)) derivedKnown = derivedKnown && keys.count(var);
        for (const auto& var : ir::parentVars(relation)) parentsKnown = parentsKnown && keys.count(var);
        if (!derivedKnown || parentsKnown) continue;
        if (const auto* split = std::get_if<ir::SplitRelation>(&relation)) {
          keys[split->parent] = make(Key::Kind::Pair, keys.at(split->outer), keys.at(split->inner));
        } else if (const auto* divide = std::get_if<ir::DivideRelation>(&relation)) {
          keys[divide->parent] = make(Key::Kind::Pair, keys.at(divide->outer), keys.at(divide->inner));
        } else if (const auto* fuse = std::get_if<ir::FuseRelation>(&relation)) {
          std::tie(keys[fuse->outer], keys[fuse->inner]) = fusedParts(keys.at(fuse->fused));
        } else if (const auto* bound = std::get_if<ir::BoundRelation>(&relation)) {
          keys[bound->var] = keys.at(bound->boundVar);
        } else {
          const auto& pos = std::get<ir::PosRelation>(relation);
          // Positions of the variable's level (within one segment), or of
          // the two outer levels a fused variable's positions iterate: in
          // the order of their coordinates where the levels are ordered,
          // each coordinate once where they are also unique.
          const ir::Format& format = pos.access.tensor().format();
          const auto& indices = pos.access.indices();
          auto mode = std::find(indices.begin(), indices.end(), pos.indexVar);
          int level = mode == indices.end() ? -1 : format.levelOfMode(static_cast<int>(mode - indices.begin()));
          int first = level < 0 ? 0 : level, last = level < 0 ? 1 : level;
          bool ordered = true, unique = true;
          for (int l = first; l <= last && l < format.order(); ++l) {
            ordered = ordered && format.level(l).ordered;
            unique = unique && format.level(l).unique;
          }
          if (!ordered) continue;  // coordinates in no order: the variable gets no key
          KeyRef position = keys.at(pos.posVar);
          keys[pos.indexVar] = unique ? position : make(Key::Kind::Repeating, position);
        }
        changed = true;
      }
    }
    return keys;
  }

  // The loops known to run once: the inner loop of a split by 1, the outer
  // loop of a divide into 1, a bound of 1.
  std::set<size_t> singleIterationLoops() const {
    std::set<size_t> single;
    for (size_t loop = 0; loop < loops_.size(); ++loop) {
      for (const auto& relation : relations_) {
        const auto* split = std::get_if<ir::SplitRelation>(&relation);
        const auto* divide = std::get_if<ir::DivideRelation>(&relation);
        const auto* bound = std::get_if<ir::BoundRelation>(&relation);
        if ((split && split->inner == loops_[loop] && split->factor == 1) ||
            (divide && divide->outer == loops_[loop] && divide->factor == 1) ||
            (bound && bound->boundVar == loops_[loop] && bound->value <= 1))
          single.insert(loop);
      }
    }
    return single;
  }

  OutputVisitOrder::Refusal outOfOrder(const ir::Access& lhs, int level) const {
    const ir::TensorVar& tensor = lhs.tensor();
    const ir::Format& format = tensor.format();
    const ir::IndexVar& var = lhs.indices()[format.modeOfLevel(level)];
    // The command that replaced the level's variable, else an outer level's.
    std::optional<ir::ProvenanceRelation> command;
    for (int l = level; l >= 0 && !command; --l) {
      const ir::IndexVar& levelVar = lhs.indices()[format.modeOfLevel(l)];
      for (const auto& relation : relations_) {
        auto parents = ir::parentVars(relation);
        if (std::find(parents.begin(), parents.end(), levelVar) == parents.end()) continue;
        command = relation;
        break;
      }
    }
    std::string loops;
    for (const auto& loop : loops_) loops += (loops.empty() ? "" : ", ") + loop.name();
    return {command, "the loops (" + loops + ") visit the coordinates of " + tensor.name() + "'s level " +
           std::to_string(level + 1) + " (" + format.level(level).toString() + ", indexed by " + var.name() +
           ") and its outer levels out of order, or return to one after visiting others, but that level is "
           "assembled by appending its coordinates in order; order the loops over the parts of " + var.name() +
           " (and of " + tensor.name() + "'s outer variables) outermost first, with the loops over other variables "
           "inside them"};
  }

  const std::vector<ir::ProvenanceRelation>& relations_;
  const std::function<bool(const ir::TensorVar&)>& assembled_;
  std::vector<ir::IndexVar> loops_;
};

}  // namespace

OutputVisitOrder outputVisitOrder(const ir::IndexStmt& cin, const std::vector<ir::ProvenanceRelation>& relations,
                                  const std::function<bool(const ir::TensorVar&)>& assembled) {
  OrderChecker checker(relations, assembled);
  checker.walk(cin);
  return checker.result;
}

}  // namespace tcc::lowering
