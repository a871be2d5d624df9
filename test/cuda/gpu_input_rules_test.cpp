// The rules that pick a kernel per input are written once
// (lowering/src/gpu/gpu_input_rules.h); their C++ evaluation
// (spmmKernelRule, laneSlicedRowRule, balancedRowRule) and the host part
// lowered from them must agree on every input. Here the lowered host part
// runs in the launcher's interpreter on statistics given outright: A's
// longest row and nonzeros as constants in place of their reads of pos,
// rows and N as the tensors' dimensions, and each branch of the choice
// returning which kernel it would launch, told by the kernels it launches
// (not by the rule). The statistics: every constant of the rules and
// every product's boundary at -1, 0 and +1, products at the int64 limit,
// empty matrices, and random ones from 0 to the limits of their types.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cuda_lowering.h"
#include "gpu_host_part.h"
#include "lane_sliced_inputs.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

namespace imp = ir::imp;
using lowering::SpmmKernel;

constexpr int64_t kInt64Max = INT64_MAX;
constexpr int64_t kInt32Max = INT32_MAX;

constexpr const char* kSpmm = R"(tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense

C(i, k) = A(i, j) * B(j, k)
)";

// The kernels a statement launches.
class Launches : public imp::IRVisitor {
 public:
  explicit Launches(const lowering::GpuFunction& function) : function_(function) {}
  std::vector<const lowering::GpuKernel*> kernels;

 protected:
  using imp::IRVisitor::visit;
  void visit(const imp::Evaluate* op) override {
    const auto* call = op->value.as<imp::Call>();
    if (const lowering::GpuKernel* kernel = call ? function_.kernelNamed(call->name) : nullptr)
      kernels.push_back(kernel);
  }

 private:
  const lowering::GpuFunction& function_;
};

// The host part with A's longest row and nonzeros given, and each branch
// of the choice (the if over the rule's bools) returning `codeOf` the
// kernels it launches.
class GivenStatistics : public imp::IRMutator {
 public:
  GivenStatistics(const lowering::GpuFunction& function, int64_t longest, int64_t nonzeros,
                  std::function<int32_t(const std::vector<const lowering::GpuKernel*>&)> codeOf)
      : function_(function), longest_(longest), nonzeros_(nonzeros), codeOf_(std::move(codeOf)) {}
  int replaced = 0;

 protected:
  using imp::IRMutator::visit;
  imp::Stmt visit(const imp::Declare* op, const imp::Stmt& self) override {
    const std::string& name = op->var.as<imp::Var>()->name;
    if (name == "A_longest_row") return ++replaced, imp::Declare::make(op->var, imp::IntImm::make(longest_, imp::Type::int64()));
    if (name == "A_nonzeros") return ++replaced, imp::Declare::make(op->var, imp::IntImm::make(nonzeros_, imp::Type::int64()));
    return self;
  }
  imp::Stmt visit(const imp::If* op, const imp::Stmt&) override {
    imp::Stmt otherwise = op->elseCase.as<imp::If>() ? mutate(op->elseCase) : branch(op->elseCase);
    return imp::If::make(op->condition, branch(op->thenCase), otherwise);
  }

 private:
  imp::Stmt branch(const imp::Stmt& body) {
    Launches launches(function_);
    body.accept(launches);
    return imp::Return::make(imp::IntImm::make(codeOf_(launches.kernels), imp::Type::int32()));
  }
  const lowering::GpuFunction& function_;
  int64_t longest_, nonzeros_;
  std::function<int32_t(const std::vector<const lowering::GpuKernel*>&)> codeOf_;
};

// Runs the host part of `function` on the statistics (rows and N as
// every tensor's dimensions); returns what the branch it took returned.
int32_t hostPartChoice(const lowering::GpuFunction& function, const lowering::SpmmStatistics& statistics,
                       std::function<int32_t(const std::vector<const lowering::GpuKernel*>&)> codeOf) {
  GivenStatistics given(function, statistics.longestRow, statistics.nonzeros, std::move(codeOf));
  lowering::GpuFunction changed = function;
  changed.host.body = given.mutate(function.host.body);
  // Both statistics, or the longest row alone where the rule reads no
  // other (the SpMM's tiles alone, under fp strict).
  EXPECT_GE(given.replaced, 1) << "the host part no longer declares A_longest_row or A_nonzeros";
  std::vector<tcc_tensor> tensors(function.host.parameters.size());
  std::vector<tcc_tensor*> pointers;
  for (auto& tensor : tensors) {
    tensor.order = 2;
    tensor.dims[0] = static_cast<int32_t>(statistics.rows);
    tensor.dims[1] = static_cast<int32_t>(statistics.columns);
    pointers.push_back(&tensor);
  }
  detail::HostPartDevice device;
  device.launch = [](const detail::KernelLaunch&) { ADD_FAILURE() << "a branch launched a kernel"; };
  device.read = [](void*, const void*, size_t) { ADD_FAILURE() << "the rule read the device"; };
  return detail::runHostPart(changed, pointers, device);
}

// Statistics at every boundary of the rules, at the limits of their types,
// and drawn at random: rows and N are int32 dimensions, nonzeros and the
// longest row int64.
std::vector<lowering::SpmmStatistics> statisticsToTry() {
  using lowering::SpmmStatistics;
  std::vector<SpmmStatistics> all;
  auto around = [](int64_t value, int64_t most) {
    std::vector<int64_t> near;
    for (int64_t delta : {-1, 0, 1})
      if (value + delta >= 0 && value + delta <= most && !(delta == 1 && value == most)) near.push_back(value + delta);
    return near;
  };
  auto clampTo = [](int64_t value, int64_t most) { return value < 0 ? 0 : value > most ? most : value; };
  // Each statistic near each constant the rules compare it with, or
  // multiply it by, and near its limit.
  std::vector<int64_t> constants{0,
                                 1,
                                 2,
                                 32,
                                 64,
                                 256,
                                 1024,
                                 4096,
                                 32768,
                                 65536,
                                 131072,
                                 lowering::kBalancedLongestRow,
                                 lowering::kBalancedSkew,
                                 lowering::kSplitWorkPerLongestRow,
                                 lowering::kSmallSplit,
                                 lowering::kFewRowWork,
                                 lowering::kLongMeanRow,
                                 lowering::kManyRows,
                                 lowering::kLongRowForOtherTiles,
                                 lowering::kLaneSlicedMeanRow,
                                 kInt32Max,
                                 kInt64Max / 32768,
                                 kInt64Max / 32,
                                 kInt64Max / kInt32Max,
                                 kInt64Max};
  std::vector<int64_t> small, large;
  for (int64_t constant : constants) {
    for (int64_t value : around(constant, kInt32Max)) small.push_back(value);
    for (int64_t value : around(constant, kInt64Max)) large.push_back(value);
  }
  std::mt19937_64 random(21);
  auto pick = [&](const std::vector<int64_t>& values) { return values[random() % values.size()]; };
  for (int k = 0; k < 20000; ++k) all.push_back({pick(small), pick(large), pick(large), pick(small)});
  // Each product the rules compare, at its boundary: longest * rows =
  // 32 * nonzeros, nonzeros * N = 32768 * longest, rows * N = 65536,
  // nonzeros = 64 * rows and 32 * rows; then across the int64 limit.
  for (int k = 0; k < 4000; ++k) {
    int64_t rows = random() % 2 ? pick(small) : int64_t(random() % (kInt32Max + 1));
    int64_t columns = random() % 2 ? pick(small) : int64_t(random() % 300);
    int64_t longest = random() % 2 ? pick(large) : int64_t(random() % 100000);
    int64_t product = lowering::saturatingMul(longest, rows);
    for (int64_t nonzeros : around(product / lowering::kBalancedSkew, kInt64Max))
      all.push_back({rows, nonzeros, longest, columns});
    int64_t nonzeros = random() % 2 ? pick(large) : int64_t(random() % 10000000);
    for (int64_t longestRow : around(lowering::saturatingMul(nonzeros, columns) / lowering::kSplitWorkPerLongestRow,
                                     kInt64Max))
      all.push_back({rows, nonzeros, longestRow, columns});
    for (int64_t value : {lowering::kLongMeanRow, lowering::kLaneSlicedMeanRow})
      for (int64_t near : around(lowering::saturatingMul(value, rows), kInt64Max))
        all.push_back({rows, near, longest, columns});
    if (columns > 0)
      for (int64_t near : around(lowering::kFewRowWork / columns, kInt32Max))
        all.push_back({near, clampTo(lowering::kLongMeanRow * near + int64_t(random() % 3) - 1, kInt64Max), longest,
                       columns});
  }
  // Empty matrices, and matrices with no columns of C.
  for (int64_t nonzeros : {int64_t(0), int64_t(1), int64_t(300), kInt64Max})
    for (int64_t longest : {int64_t(0), int64_t(256), kInt64Max}) {
      all.push_back({0, nonzeros, longest, 32});
      all.push_back({4096, nonzeros, longest, 0});
    }
  // Drawn from 0 to the limits, on a log scale.
  auto logUniform = [&](int64_t most) {
    int bits = static_cast<int>(random() % 64);
    return clampTo(static_cast<int64_t>(random() >> (64 - std::max(bits, 1))), most);
  };
  for (int k = 0; k < 20000; ++k)
    all.push_back({logUniform(kInt32Max), logUniform(kInt64Max), logUniform(kInt64Max), logUniform(kInt32Max)});
  return all;
}

// Which of the SpMM's kernels a branch launches, as a code (the kernel's
// enumerator + 1), told by its loops: the split's warps search pos for
// their rows, the tiles' warps each take (C2_dimension + tile - 1) / tile
// tiles of a row.
int32_t spmmKernelCode(const Lowered& lowered, const std::vector<const lowering::GpuKernel*>& kernels) {
  if (kernels.empty()) return -1;
  const std::string name = kernels[0]->name;
  size_t at = lowered.cuda.find("void __launch_bounds__(256) " + name + "(");
  if (at == std::string::npos) return -1;
  std::string text = lowered.cuda.substr(at, lowered.cuda.find("\n}\n", at) - at);
  auto code = [](SpmmKernel kernel) { return static_cast<int32_t>(kernel) + 1; };
  // (A split in one order launches two kernels: the shares', then the
  // crossing rows'.)
  if (contains(text, "tcc_segment_of(")) {
    const bool ordered = contains(text, "_share_slots");
    if (kernels.size() != (ordered ? 2u : 1u)) return -1;
    if (contains(text, "+ 15LL) / 16LL)")) return code(ordered ? SpmmKernel::OrderedSplit16 : SpmmKernel::Split16);
    if (contains(text, "+ 31LL) / 32LL)")) return code(ordered ? SpmmKernel::OrderedSplit32 : SpmmKernel::Split32);
    return -1;
  }
  if (kernels.size() != 1) return -1;
  if (contains(text, "(C2_dimension + 127) / 128")) return code(SpmmKernel::Tiles128);
  if (contains(text, "(C2_dimension + 63) / 64")) return code(SpmmKernel::Tiles64);
  if (contains(text, "(C2_dimension + 31) / 32")) return code(SpmmKernel::Tiles32);
  return -1;
}

// Under fp fast the host part chooses among the tiles and the atomic
// splits; under fp strict (the default) among the tiles and the splits in
// one order.
class GpuInputRulesByMode : public ::testing::TestWithParam<frontend::FloatingPointMode> {};

TEST_P(GpuInputRulesByMode, TheSpmmHostPartChoosesTheKernelSpmmKernelRuleNamesOnEveryStatistic) {
  const bool fast = GetParam() == frontend::FloatingPointMode::Fast;
  CompileOptions options;
  options.floatingPoint = GetParam();
  Lowered lowered = lowerForCuda(kSpmm, options);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), fast ? 5u : 7u);
  auto codeOf = [&](const std::vector<const lowering::GpuKernel*>& kernels) { return spmmKernelCode(lowered, kernels); };
  std::map<SpmmKernel, int> seen;
  int overflowing = 0, checked = 0;
  for (const lowering::SpmmStatistics& statistics : statisticsToTry()) {
    int32_t host = hostPartChoice(function, statistics, codeOf);
    SpmmKernel rule = lowering::spmmKernelRule(
        statistics, fast ? lowering::NonzeroSplits::Atomic : lowering::NonzeroSplits::InOneOrder);
    ++checked;
    ++seen[rule];
    int64_t product;
    overflowing += __builtin_mul_overflow(statistics.nonzeros, statistics.columns, &product) ||
                   __builtin_mul_overflow(statistics.longestRow, statistics.rows, &product);
    ASSERT_EQ(host, static_cast<int32_t>(rule) + 1)
        << "rows " << statistics.rows << ", nonzeros " << statistics.nonzeros << ", longest row "
        << statistics.longestRow << ", N " << statistics.columns << ": the rule names " << toString(rule);
  }
  EXPECT_GT(checked, 40000);
  EXPECT_GT(overflowing, 1000);  // products past the int64 limit, saturated on both sides
  for (SpmmKernel kernel : {SpmmKernel::Tiles32, SpmmKernel::Tiles64, SpmmKernel::Tiles128})
    EXPECT_GT(seen[kernel], 100) << toString(kernel);
  for (SpmmKernel kernel : {SpmmKernel::Split16, SpmmKernel::Split32})
    if (fast)
      EXPECT_GT(seen[kernel], 100) << toString(kernel);
    else
      EXPECT_EQ(seen[kernel], 0) << toString(kernel);
  for (SpmmKernel kernel : {SpmmKernel::OrderedSplit16, SpmmKernel::OrderedSplit32})
    if (fast)
      EXPECT_EQ(seen[kernel], 0) << toString(kernel);
    else
      EXPECT_GT(seen[kernel], 100) << toString(kernel);
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuInputRulesByMode,
                         ::testing::Values(frontend::FloatingPointMode::Fast, frontend::FloatingPointMode::Strict),
                         [](const auto& info) { return std::string(frontend::toString(info.param)); });

TEST(GpuInputRules, TheLaneSlicedHostPartChoosesWhatLaneSlicedRowRuleSaysOnEveryStatistic) {
  Lowered lowered = lowerForCuda(kLaneSlicedStatements[0].dsl + "target cuda\n");
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  // A branch of warps (the lanes slice a row) returns 1, of threads 2.
  auto codeOf = [](const std::vector<const lowering::GpuKernel*>& kernels) {
    bool warps = std::any_of(kernels.begin(), kernels.end(),
                             [](const auto* kernel) { return kernel->unit() == imp::LoopKind::GpuWarp; });
    return kernels.empty() ? -1 : warps ? 1 : 2;
  };
  std::map<bool, int> seen;
  int skewed = 0;
  for (const lowering::SpmmStatistics& statistics : statisticsToTry()) {
    int32_t host = hostPartChoice(function, statistics, codeOf);
    bool warps = lowering::laneSlicedRowRule(statistics.longestRow, statistics.rows, statistics.nonzeros);
    ++seen[warps];
    skewed += lowering::balancedRowRule(statistics.longestRow, statistics.rows, statistics.nonzeros) &&
              statistics.nonzeros < lowering::kLaneSlicedMeanRow * statistics.rows;
    ASSERT_EQ(host, warps ? 1 : 2) << "rows " << statistics.rows << ", nonzeros " << statistics.nonzeros
                                   << ", longest row " << statistics.longestRow;
  }
  EXPECT_GT(seen[true], 1000);
  EXPECT_GT(seen[false], 1000);
  EXPECT_GT(skewed, 100);  // warps for the skewed row alone
}

}  // namespace
}  // namespace tcc::test
