// TCA-SpMM without a GPU: the preprocessing arrays, and which statements
// the intrinsic takes, leaves to the general lowering, or refuses and why.
#include <gtest/gtest.h>

#include <vector>

#include "gpu_host_part.h"
#include "tcc/lowering/tca_spmm.h"
#include "tcc/schedule.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::vector<int64_t> positionsOf(const std::vector<int64_t>& rowLengths) {
  std::vector<int64_t> pos = {0};
  for (int64_t length : rowLengths) pos.push_back(pos.back() + length);
  return pos;
}

// A target no matrix reaches keeps the paper's classes: unit = one step.
constexpr int64_t kManyWarps = int64_t(1) << 40;

TEST(TcaSpmmPlan, RowsGetOneTwoFourOrEightWarpsByTheirNonzerosAndLongRowsSeveralBlocks) {
  // N = 64: one chunk of 8 nonzeros per MMA, so the unit is 8 nonzeros.
  std::vector<int64_t> lengths = {0, 1, 8, 9, 16, 17, 32, 33, 64, 65, 200, 0};
  std::vector<int64_t> pos = positionsOf(lengths);
  lowering::TcaSpmmPlan plan = lowering::planTcaSpmm(pos.data(), static_cast<int>(lengths.size()), 64, kManyWarps);
  EXPECT_EQ(plan.chunksPerStep, 1);
  EXPECT_TRUE(plan.aligned);
  EXPECT_EQ(plan.unit, 8);
  std::vector<int32_t> expectedWarps = {0, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32, 0};
  std::vector<int32_t> rows, counts, ids;
  for (size_t row = 0; row < lengths.size(); ++row)
    for (int32_t id = 0; id < expectedWarps[row]; ++id) {
      rows.push_back(static_cast<int32_t>(row));
      counts.push_back(expectedWarps[row]);
      ids.push_back(id);
    }
  EXPECT_EQ(plan.rowIdForEachWarp, rows);
  EXPECT_EQ(plan.numWarpsPerRow, counts);
  EXPECT_EQ(plan.warpidWithinRow, ids);
}

TEST(TcaSpmmPlan, NarrowDenseMatricesPutSeveralChunksInOneMma) {
  std::vector<int64_t> pos = positionsOf({16, 17});
  for (auto [columns, chunks] : std::vector<std::pair<int, int>>{{1, 8}, {8, 8}, {9, 4}, {16, 4}, {17, 2}, {32, 2},
                                                                 {33, 1}, {64, 1}, {256, 1}}) {
    lowering::TcaSpmmPlan plan = lowering::planTcaSpmm(pos.data(), 2, columns, kManyWarps);
    EXPECT_EQ(plan.chunksPerStep, chunks) << "N = " << columns;
    EXPECT_EQ(plan.aligned, columns % 8 == 0) << "N = " << columns;
    EXPECT_EQ(plan.unit, 8 * chunks) << "N = " << columns;
  }
  // N = 32: 16 nonzeros per MMA, so 16 nonzeros take one warp and 17 two.
  lowering::TcaSpmmPlan plan = lowering::planTcaSpmm(pos.data(), 2, 32, kManyWarps);
  EXPECT_EQ(plan.rowIdForEachWarp, (std::vector<int32_t>{0, 1, 1}));
}

TEST(TcaSpmmPlan, LargeMatricesGiveEachWarpMoreNonzerosWhileTheDeviceStaysFull) {
  // 10000 rows of 40 nonzeros: with one step per unit that is 8 warps a
  // row; a device of 1000 warps needs only one warp per 8 units.
  std::vector<int64_t> pos = positionsOf(std::vector<int64_t>(10000, 40));
  lowering::TcaSpmmPlan plan = lowering::planTcaSpmm(pos.data(), 10000, 128, 1000);
  EXPECT_EQ(plan.unit, 8 * 32);
  EXPECT_EQ(plan.warps(), 10000);
  lowering::TcaSpmmPlan full = lowering::planTcaSpmm(pos.data(), 10000, 128, 80000);
  EXPECT_EQ(full.unit, 8);
  EXPECT_EQ(full.warps(), 80000);
  // Between: the largest unit that still gives the target.
  lowering::TcaSpmmPlan middle = lowering::planTcaSpmm(pos.data(), 10000, 128, 20000);
  EXPECT_EQ(middle.unit, 32);  // 40 nonzeros <= 2 units of 32: 2 warps a row
  EXPECT_EQ(middle.warps(), 20000);
}

TEST(TcaSpmmPlan, ASmallMatrixSpreadsItsColumnTilesOverWarps) {
  // Too few warps for the device even with the paper's classes: with N =
  // 256 (4 tiles of 64 columns) every nonempty row gets at least 4 warps,
  // with N = 130 (3 tiles) 2, with N = 64 (one tile) 1.
  std::vector<int64_t> lengths = {3, 0, 8, 20, 100};
  std::vector<int64_t> pos = positionsOf(lengths);
  lowering::TcaSpmmPlan wide = lowering::planTcaSpmm(pos.data(), 5, 256, kManyWarps);
  EXPECT_EQ(wide.unit, 8);
  EXPECT_EQ(wide.leastWarpsPerRow, 4);
  EXPECT_EQ(wide.rowIdForEachWarp, (std::vector<int32_t>{0, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4,
                                                          4, 4, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 5, 130, kManyWarps).leastWarpsPerRow, 2);
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 5, 64, kManyWarps).leastWarpsPerRow, 1);
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 5, 4096, kManyWarps).leastWarpsPerRow, 8);
  // A device these rows fill keeps one warp for a short row.
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 5, 256, 4).leastWarpsPerRow, 1);
}

TEST(TcaSpmmPlan, AnEmptyMatrixNeedsNoWarps) {
  std::vector<int64_t> pos = positionsOf({0, 0, 0});
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 3, 64, 100).warps(), 0);
  EXPECT_EQ(lowering::planTcaSpmm(pos.data(), 0, 64, 100).warps(), 0);
}

constexpr const char* kSpmm = R"(
tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float16
tensor B(J, K) : dense of float16
C(i, k) = A(i, j) * B(j, k)
)";

// What `tcc explain` says of the first statement (lowering needs no GPU).
std::string explain(const Program& program, const CompileOptions& options = {}) {
  std::string text;
  Lowered lowered = lowerProgram(program, options);
  for (const auto& decision : lowered.statements.at(0).decisions) text += decision + "\n";
  return text;
}
std::string explain(const std::string& text) { return explain(Program::fromText(text)); }

std::string compileError(const std::string& text) {
  try {
    lowerProgram(Program::fromText(text));
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(compiled)";
}

TEST(TcaSpmmRecognition, Float16CsrTimesDenseOnCudaIsTcaSpmmByDefault) {
  std::string text = explain(std::string(kSpmm) + "target cuda\n");
  EXPECT_NE(text.find("TCA-SpMM intrinsic"), std::string::npos) << text;
  EXPECT_NE(text.find("mma.sync m16n8k8"), std::string::npos) << text;
}

TEST(TcaSpmmRecognition, TensorcoreAsksForItAndTheFactorsMayComeInEitherOrder) {
  std::string text = explain(R"(
tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float16
tensor B(J, K) : dense of float16
C(i, k) = B(j, k) * A(i, j)
schedule { tensorcore(m = 16, n = 8, k = 8) }
target cuda
)");
  EXPECT_NE(text.find("TCA-SpMM intrinsic"), std::string::npos) << text;
}

TEST(TcaSpmmRecognition, OtherTypesGoToTheGeneralLoweringWithoutTensorcore) {
  std::string text = explain(R"(
tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float32
tensor B(J, K) : dense of float32
C(i, k) = A(i, j) * B(j, k)
target cuda
)");
  EXPECT_EQ(text.find("TCA-SpMM"), std::string::npos) << text;
}

// kSpmm under tensorcore() on cuda, with one thing changed: each is refused
// with its reason.
TEST(TcaSpmmRecognition, TensorcoreRefusesWhatItCannotComputeWithTheReason) {
  const std::string tensorcore = std::string(kSpmm) + "schedule { tensorcore() }\ntarget cuda\n";
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = tensorcore;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  };
  struct Case {
    std::string program;
    std::vector<std::string> reasons;
  };
  const std::string spmv = R"(
tensor y(I) : dense of float32
tensor A(I, J) : csr of float16
tensor x(J) : dense of float16
y(i) = A(i, j) * x(j)
schedule { tensorcore() }
target cuda
)";
  for (const Case& c : std::vector<Case>{
           {edited("csr of float16", "csr"),
            {"the MMA multiplies float16; declare A and B `of float16` (they are float64 and float16)", "tensorcore()"}},
           {edited("dense of float32", "dense of float16"), {"the MMA accumulates in float32; declare C `of float32`"}},
           {edited("csr of float16", "csc of float16"), {"TCA-SpMM reads its sparse operand in CSR"}},
           {edited("target cuda", "target cpu"), {"tensor cores need the cuda target"}},
           {spmv, {"tensor cores compute a CSR SpMM, O(i,j) = S(i,k) * D(k,j), and nothing else"}},
           {edited("tensorcore()", "tensorcore(m = 16, n = 8, k = 16)"), {"k = 16 is not that shape"}},
       }) {
    std::string message = compileError(c.program);
    for (const auto& reason : c.reasons) EXPECT_NE(message.find(reason), std::string::npos) << c.program << message;
  }
}

TEST(TcaSpmmRecognition, TheCppScheduleAsksForTensorCoresToo) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar C("C", {"I", "K"}, Format::denseOfOrder(2), ir::Datatype::Float32);
  TensorVar A("A", {"I", "J"}, Format::csr(), ir::Datatype::Float16);
  TensorVar B("B", {"J", "K"}, Format::denseOfOrder(2), ir::Datatype::Float16);
  Schedule schedule;
  schedule.tensorcore();
  Program program = Program::fromStatements({C(i, k) = A(i, j) * B(j, k)}, {C, A, B}, schedule);
  CompileOptions cuda;
  cuda.target = frontend::Target::Cuda;
  std::string text = explain(program, cuda);
  EXPECT_NE(text.find("TCA-SpMM intrinsic"), std::string::npos) << text;
  CompileOptions cpu;
  cpu.target = frontend::Target::Cpu;
  try {
    lowerProgram(program, cpu);
    ADD_FAILURE() << "tensorcore() lowered for the cpu";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("tensor cores need the cuda target"), std::string::npos) << error.what();
  }
}

TEST(TcaSpmmRecognition, ThePrintedCudaHoldsTheKernelsAndThePreprocessing) {
  std::string cuda = lowerProgram(Program::fromText(std::string(kSpmm) + "target cuda\n")).cuda;
  for (const char* expected : {"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "ld.global.nc.v4.u32",
                               "__shfl_xor_sync", "tcc_tca_fill", "row_id_for_each_warp", "_c1_v<<<"})
    EXPECT_NE(cuda.find(expected), std::string::npos) << expected;
}

// The host part of a TCA-SpMM function launches no generated kernel: it
// hands the intrinsic its tensors by name and returns the intrinsic's status.
TEST(TcaSpmmHostPart, HandsTheIntrinsicItsTensorsAndReturnsItsStatus) {
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmm) + "target cuda\n"));
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  EXPECT_TRUE(function.kernels.empty());
  ASSERT_EQ(function.intrinsics.size(), 1u);
  EXPECT_EQ(function.intrinsics[0].op->name, lowering::kTcaSpmmIntrinsic);
  tcc_tensor c{}, a{}, b{};
  c.order = a.order = b.order = 2;
  std::vector<tcc_tensor*> tensors;
  for (const auto& parameter : function.host.parameters)
    tensors.push_back(parameter.name == "C" ? &c : parameter.name == "A" ? &a : &b);
  int calls = 0;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch&) { ADD_FAILURE() << "a generated kernel was launched"; };
  device.intrinsic = [&](const lowering::GpuIntrinsicCall& call, const std::map<std::string, tcc_tensor*>& operands) {
    ++calls;
    EXPECT_EQ(call.op->tensors, (std::vector<std::string>{"C", "A", "B"}));
    EXPECT_NE(call.prefix.find("tca_spmm"), std::string::npos) << call.prefix;
    EXPECT_EQ(operands.at("C"), &c);
    EXPECT_EQ(operands.at("A"), &a);
    EXPECT_EQ(operands.at("B"), &b);
    return calls == 1 ? 0 : 2;
  };
  EXPECT_EQ(detail::runHostPart(function, tensors, device), 0);
  EXPECT_EQ(detail::runHostPart(function, tensors, device), 2);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace tcc::test
