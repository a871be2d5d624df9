// precompute(expr, i_vars, o_vars, W) with W a workspace tensor declared in
// a sparse_workspace(...) format (§6.1): the expression goes into an ISM
// workspace with W's policy, capacity, pipelining, double buffering and
// output order, filled by loops the statement's other commands schedule,
// and the statement reads W in its place. Against the dense reference; bad
// input stops with file:line:col and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernel_check.h"
#include "tcc/ism/policy_registry.h"

namespace tcc::test {
namespace {

std::string replaced(std::string text, const std::map<std::string, std::string>& substitutions) {
  for (const auto& [key, value] : substitutions)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

// Outer-product SpGEMM plus D, the product precomputed into W.
const char* kOuterPlus = R"(tensor A(I, J) : @A
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
tensor D(I, J) : csr
tensor W(I, J) : sparse_workspace(@W)@ORDER
A(i, j) = B(i, k) * C(k, j) + D(i, j)
schedule {
  reorder(k, i, j)
  precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)
}
)";

std::map<std::string, rt::Coo> outerInputs(uint64_t seed) {
  return {{"B", randomSparse({29, 23}, 0.1, seed)},
          {"C", randomSparse({23, 31}, 0.1, seed + 1)},
          {"D", randomSparse({29, 31}, 0.1, seed + 2)}};
}

TEST(PrecomputeIntoWorkspaceTensor, EveryPolicyOptionAndOutputOrder) {
  std::map<std::string, rt::Coo> inputs = outerInputs(8100);
  for (const char* out : {"csr", "dcsr", "csc"})
    for (const char* order : {"", " order (1, 0)"})
      for (const char* options : {"policy = bucket", "policy = hash, capacity = 4", "policy = coord, pipeline = on",
                                  "policy = map, double_buffer = on, capacity = 2",
                                  "policy = vector, pipeline = on, double_buffer = on", "capacity = 16"}) {
        std::string program = replaced(kOuterPlus, {{"@A", out}, {"@W", options}, {"@ORDER", order}});
        SCOPED_TRACE(program);
        expectProgramMatchesReference(program, inputs);
      }
  std::string program = replaced(kOuterPlus, {{"@A", "csr"}, {"@W", "policy = coord, capacity = 64, pipeline = on"},
                                              {"@ORDER", " order (1, 0)"}});
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "goes into sparse workspace W of order 2 (policy coord: as the schedule asks, "
                                  "pipelined, first capacity 64), inserted by loops over k, i, j (summing k), sorted "
                                  "in its output order j, i"))
    << decisions;
  EXPECT_TRUE(contains(decisions, "the statement reads W(i,j): A(i,j) = W(i,j) + D(i,j)")) << decisions;
}

// o_vars rename W's indices where it is filled (TACO's iw_vars): the
// producer's loops take the new names, and the statement's other commands
// schedule them by those names.
TEST(PrecomputeIntoWorkspaceTensor, RenamedIndicesScheduleTheProducer) {
  std::map<std::string, rt::Coo> inputs = outerInputs(8150);
  std::string renamed = replaced(kOuterPlus, {{"@A", "dcsr"}, {"@W", "policy = hash"}, {"@ORDER", " order (1, 0)"},
                                              {"  reorder(k, i, j)\n", ""},
                                              {"{i, j}, {i, j}, W)", "{i, j}, {iw, jw}, W)\n  reorder(k, jw, iw)"}});
  SCOPED_TRACE(renamed);
  expectProgramMatchesReference(renamed, inputs);
  std::string decisions = decisionsOf(renamed);
  EXPECT_TRUE(contains(decisions, "B(iw,k) * C(k,jw) goes into sparse workspace W")) << decisions;
  EXPECT_TRUE(contains(decisions, "inserted by loops over k, jw, iw (summing k), sorted in its output order jw, iw"))
    << decisions;
  EXPECT_TRUE(contains(decisions, "the statement reads W(i,j): A(i,j) = W(i,j) + D(i,j)")) << decisions;
  // A command naming the consumer's i after the rename has no loop to act on.
  std::string stale = replaced(renamed, {{"reorder(k, jw, iw)", "reorder(k, j, i)"}});
  EXPECT_TRUE(contains(errorOf(stale), "test.tc:9:3: error: reorder(k, j, i): no loop over j is here: j is renamed "
                                       "jw where workspace W is filled, by `precompute(B(i, k) * C(k, j), {i, j}, "
                                       "{iw, jw}, W)` at line 8, and the other commands schedule the loops that fill "
                                       "it; the loops are k, jw, iw"))
    << errorOf(stale);
}

// The whole right-hand side, unscheduled: W is then copied into A, whose
// levels Compress builds directly when their order is W's.
TEST(PrecomputeIntoWorkspaceTensor, WholeRightHandSideAndRealMatrices) {
  const char* program = R"(tensor A(J, I) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor W(J, I) : sparse_workspace(policy = hash)
A(j, i) = B(i, k) * C(k, j)
schedule {
  precompute(B(i, k) * C(k, j), {j, i}, {j, i}, W)
}
)";
  expectProgramMatchesReference(program, {{"B", randomSparse({23, 31}, 0.1, 8200)}, {"C", randomSparse({31, 19}, 0.1, 8201)}});
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    expectProgramMatchesReference(program, {{"B", a}, {"C", a}});
    if (a.dims[0] > 100) continue;  // the dense reference is cubic
    expectProgramMatchesReference(replaced(kOuterPlus, {{"@A", "dcsr"}, {"@W", "policy = bucket"}, {"@ORDER", ""}}),
                                  {{"B", a}, {"C", a}, {"D", a}});
  }
}

// A third-order workspace (SpTTM into COO through W), and the product of a
// workspace with another operand.
TEST(PrecomputeIntoWorkspaceTensor, OtherOrdersAndConsumers) {
  const char* ttm = R"(tensor A(I, J, L) : coo
tensor B(K, I, J) : csf
tensor C(K, L) : csr
tensor W(I, J, L) : sparse_workspace(policy = hash, pipeline = on)
A(i, j, l) = B(k, i, j) * C(k, l)
schedule {
  precompute(B(k, i, j) * C(k, l), {i, j, l}, {i, j, l}, W)
}
)";
  expectProgramMatchesReference(ttm, {{"B", randomSparse({6, 8, 7}, 0.1, 8300)}, {"C", randomSparse({6, 9}, 0.3, 8301)}});
  const char* scaled = R"(tensor A(I, J) : dcsr
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor E(I, J) : csr
tensor W(I, J) : sparse_workspace(policy = coord) order (1, 0)
A(i, j) = 2 * (B(i, k) * C(k, j)) * E(i, j)
schedule {
  precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)
}
)";
  rt::Coo b = randomSparse({21, 17}, 0.15, 8302);
  expectProgramMatchesReference(scaled, {{"B", b}, {"C", randomSparse({17, 25}, 0.15, 8303)},
                                         {"E", randomSparse({21, 25}, 0.3, 8304)}});
}

// The same through tcc::Schedule and tcc::Workspace.
TEST(PrecomputeIntoWorkspaceTensor, FromTheCppApi) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar A("A", {"I", "J"}, Format::csr()), B("B", {"I", "K"}, Format::dcsc()), C("C", {"K", "J"}, Format::dcsr()),
    D("D", {"I", "J"}, Format::csr());
  for (const SparseWorkspaceFormat& format :
       {SparseWorkspaceFormat{"coord", 32, true, false, {1, 0}}, SparseWorkspaceFormat{"bucket", std::nullopt, false, true, {}},
        SparseWorkspaceFormat{}}) {
    Workspace W("W", {"I", "J"}, format);
    Schedule schedule;
    schedule.reorder({k, i, j}).precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W);
    KernelCheck check;
    check.statements = {A(i, j) = B(i, k) * C(k, j) - D(i, j)};
    check.tensors = {A, B, C, D};
    check.schedule = schedule;
    check.inputs = outerInputs(8400);
    expectMatchesReference(check);
  }
  Schedule zero;
  zero.precompute(B(i, k) * C(k, j), {i, j}, {i, j}, Workspace("W", {"I", "J"}, {.capacity = 0}));
  try {
    Program::fromStatements({A(i, j) = B(i, k) * C(k, j)}, {A, B, C}, zero);
    ADD_FAILURE() << "a zero capacity was accepted";
  } catch (const std::exception& error) {
    EXPECT_TRUE(contains(error.what(), "capacity must be positive")) << error.what();
  }
  Schedule fiveModes;
  fiveModes.precompute(B(i, k) * C(k, j), {i, j}, {i, j}, Workspace("W", {"I", "J", "K", "L", "M"}));
  try {
    Program::fromStatements({A(i, j) = B(i, k) * C(k, j)}, {A, B, C}, fiveModes);
    ADD_FAILURE() << "a workspace of order 5 was accepted";
  } catch (const std::exception& error) {
    EXPECT_TRUE(contains(error.what(), "order 1 to 4")) << error.what();
  }
}

// sparse_workspace(...) through tcc::Schedule: a whole-output workspace for
// outer-product SpGEMM, a hoisted one per row for row-wise SpGEMM.
TEST(PrecomputeIntoWorkspaceTensor, SparseWorkspaceFromTheCppApi) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar A("A", {"I", "J"}, Format::csr()), B("B", {"I", "K"}, Format::dcsc()), C("C", {"K", "J"}, Format::dcsr()),
    Br("B", {"I", "K"}, Format::csr()), Cr("C", {"K", "J"}, Format::csr());
  std::map<std::string, rt::Coo> inputs = outerInputs(8600);
  inputs.erase("D");
  Schedule outer;
  outer.sparseWorkspace({.policy = "coord", .capacity = 8, .pipelining = true, .doubleBuffering = true});
  KernelCheck check;
  check.statements = {A(i, j) = B(i, k) * C(k, j)};
  check.tensors = {A, B, C};
  check.schedule = outer;
  check.inputs = inputs;
  std::string code = expectMatchesReference(check);
  EXPECT_TRUE(contains(code, "tcc_ism_insert_coord_2")) << code;
  Schedule rows;
  rows.sparseWorkspace({.policy = "bucket"}, j);
  check.statements = {A(i, j) = Br(i, k) * Cr(k, j)};
  check.tensors = {A, Br, Cr};
  check.schedule = rows;
  code = expectMatchesReference(check);
  EXPECT_TRUE(contains(code, "tcc_ism_kernel_drain")) << code;
}

// Bad input stops with file:line:col and the reason.
TEST(PrecomputeIntoWorkspaceTensor, BadInputIsLocated) {
  std::string good = replaced(kOuterPlus, {{"@A", "csr"}, {"@W", "policy = hash"}, {"@ORDER", ""}});
  struct Case {
    std::map<std::string, std::string> edit;
    std::string location, reason;
  };
  for (const Case& c : std::vector<Case>{
         {{{"policy = hash", "policy = heap"}}, "test.tc:5:44", "unknown policy 'heap'"},
         {{{"policy = hash", "capacity = 0"}}, "test.tc:5:46", "first capacity of a sparse workspace must be positive"},
         {{{"tensor W(I, J)", "tensor W(I, J, K, J, I)"}}, "test.tc:5:27", "a sparse workspace has order 1 to 4"},
         {{{"{i, j}, {i, j}, W", "{i}, {i}, W"}}, "test.tc:9:3", "workspace W has order 2, but 1 index variable"},
         {{{"{i, j}, {i, j}, W", "{i, j}, {j, i}, W"}}, "test.tc:9:3", "the statement already uses j"},
         {{{"{i, j}, {i, j}, W", "{i, j}, {iw, iw}, W"}}, "test.tc:9:46", "'iw' is listed twice"},
         {{{"{i, j}, {i, j}, W", "{i, j}, {iw}, W"}}, "test.tc:9:3", "differ in length"},
         {{{"{i, j}, {i, j}, W", "{i, k}, {i, k}, W"}}, "test.tc:9:3", "j is used outside"},
         {{{"+ D(i, j)", "+ W(i, j)"}}, "test.tc:6:31", "workspace 'W' is used before it is produced"},
         {{{"B(i, k) * C(k, j), {i", "B(i, k) * W(k, j), {i"}}, "test.tc:9:24", "used before it is produced"},
         {{{"order (1, 0)", ""}, {"@ORDER", ""}, {"sparse_workspace(policy = hash)", "sparse_workspace(policy = hash) order (1, 1)"}},
          "test.tc:5:50", "mode order must list each of 0..1 exactly once"},
         {{{", W)", ", D)"}}, "test.tc:9:49", "must be a tensor declared in a sparse_workspace(...) format"},
         {{{"precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)", "precompute(B(i, k) * C(k, j), {i, j}, j)"}},
          "test.tc:9:33", "a list goes with a workspace tensor"},
       }) {
    std::string program = replaced(good, c.edit);
    std::string message = errorOf(program);
    EXPECT_TRUE(contains(message, c.location)) << program << message;
    EXPECT_TRUE(contains(message, c.reason)) << program << message;
  }
}

// A policy from outside the library: components appended in arrival
// order, sorted and summed in sort(). Registered, it is valid wherever a
// policy is named.
template <int N>
class AppendThenSortPolicy {
 public:
  AppendThenSortPolicy(const ism::Shape<N>&, const ism::PolicyParams& params) : capacity_(params.capacity) {}
  bool insert(const ism::Coordinates<N>& crd, double value) {
    if (entries_.size() >= capacity_) return false;
    entries_.push_back({crd, value});
    return true;
  }
  void sort() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const auto& a, const auto& b) { return ism::lessThan<N>(a.first, b.first); });
    std::vector<std::pair<ism::Coordinates<N>, double>> summed;
    for (const auto& entry : entries_) {
      if (!summed.empty() && ism::sameCoordinates<N>(summed.back().first, entry.first)) summed.back().second += entry.second;
      else summed.push_back(entry);
    }
    entries_ = std::move(summed);
  }
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    for (const auto& [crd, value] : entries_) visit(crd, value);
  }
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  void reserve(std::size_t capacity) { capacity_ = std::max(capacity_, capacity); }

 private:
  std::size_t capacity_;
  std::vector<std::pair<ism::Coordinates<N>, double>> entries_;
};

TEST(RegisteredPolicy, NamedInTheDslAndInCpp) {
  int id = ism::registerPolicy<AppendThenSortPolicy>("append_then_sort");
  EXPECT_GE(id, 1000);
  EXPECT_EQ(ism::policyId("append_then_sort"), id);
  EXPECT_EQ(ism::policyId("hash"), 1);
  EXPECT_EQ(ism::policyId("not_registered"), -1);
  EXPECT_THROW(ism::registerPolicy<AppendThenSortPolicy>("hash"), std::invalid_argument);
  std::map<std::string, rt::Coo> inputs = outerInputs(8500);
  // A workspace tensor, small capacity (many sorts and merges), sorted by columns.
  std::string program = replaced(kOuterPlus, {{"@A", "csr"}, {"@W", "policy = append_then_sort, capacity = 8"},
                                              {"@ORDER", " order (1, 0)"}});
  std::string code = expectProgramMatchesReference(program, inputs);
  EXPECT_TRUE(contains(code, "tcc_ism_insert_user_2")) << code;
  EXPECT_TRUE(contains(decisionsOf(program), "policy append_then_sort (a registered policy): as the schedule asks"));
  // sparse_workspace(...), including a hoisted first-order workspace per row.
  const char* rowWise = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n";
  expectProgramMatchesReference(withSchedule(rowWise, "sparse_workspace(j, policy = append_then_sort, capacity = 4)"),
                                {{"B", randomSparse({37, 29}, 0.1, 8510)}, {"C", randomSparse({29, 41}, 0.1, 8511)}});
  const char* outer = "tensor A(I, J) : dcsr\ntensor B(I, K) : dcsc\ntensor C(K, J) : dcsr\nA(i, j) = B(i, k) * C(k, j)\n";
  expectProgramMatchesReference(withSchedule(outer, "sparse_workspace(policy = append_then_sort, pipeline = on)"),
                                {{"B", inputs.at("B")}, {"C", inputs.at("C")}});
  // The same from C++.
  IndexVar i("i"), j("j"), k("k");
  TensorVar A("A", {"I", "J"}, Format::csr()), B("B", {"I", "K"}, Format::dcsc()), C("C", {"K", "J"}, Format::dcsr()),
    D("D", {"I", "J"}, Format::csr());
  Schedule schedule;
  schedule.precompute(B(i, k) * C(k, j), {i, j}, {i, j},
                      Workspace("W", {"I", "J"}, {.policy = "append_then_sort", .capacity = 16}));
  KernelCheck check;
  check.statements = {A(i, j) = B(i, k) * C(k, j) + D(i, j)};
  check.tensors = {A, B, C, D};
  check.schedule = schedule;
  check.inputs = inputs;
  expectMatchesReference(check);
  // An unknown name is refused where it is written.
  std::string message = errorOf(withSchedule(rowWise, "sparse_workspace(j, policy = apend_then_sort)"));
  EXPECT_TRUE(contains(message, "test.tc:6:1")) << message;
  EXPECT_TRUE(contains(message, "registered with tcc::ism::registerPolicy")) << message;
}

}  // namespace
}  // namespace tcc::test
