// float16 inputs: values stored as IEEE binary16 and read as float32
// (exactly), in every format, beside float32 and float64 operands, into
// float32 and float64 outputs, under schedules. The inputs are drawn at
// values float16 holds, so the reference sees what the kernels read. A
// float16 output is refused, saying what to declare instead.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_check.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/value_type.h"

namespace tcc::test {
namespace {

rt::Coo roundedToFloat16(rt::Coo coo) {
  for (double& value : coo.values) value = rt::halfToFloat(rt::floatToHalf(static_cast<float>(value)));
  return coo;
}

struct HalfCase {
  std::string name;
  std::string declarations;  // beside A (I x J), declared per format below
  std::string statement;
  std::string schedule;
};

std::vector<HalfCase> cases() {
  return {
      {"Spmv", "tensor x(J) : dense of float16\ntensor y(I) : dense of float32\n", "y(i) = A(i, j) * x(j)", ""},
      {"SpmvIntoFloat64", "tensor x(J) : dense of float64\ntensor y(I) : dense of float64\n",
       "y(i) = A(i, j) * x(j)", ""},
      {"SpmvOnThreads", "tensor x(J) : dense of float32\ntensor y(I) : dense of float32\n", "y(i) = A(i, j) * x(j)",
       "parallelize(i, CPUThread, NoRaces)"},
      {"SpmvSplitRows", "tensor x(J) : dense of float16\ntensor y(I) : dense of float32\n", "y(i) = A(i, j) * x(j)",
       "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)"},
      {"Spmm", "tensor B(J, K) : dense of float16\ntensor C(I, K) : dense of float32\n",
       "C(i, k) = A(i, j) * B(j, k)", ""},
      {"SpgemmIntoCsr", "tensor B(J, K) : csr of float16\ntensor Y(I, K) : csr of float32\n",
       "Y(i, k) = A(i, j) * B(j, k)", ""},
      {"AddIntoCsr", "tensor B(I, J) : dcsr of float32\ntensor Y(I, J) : csr of float32\n",
       "Y(i, j) = A(i, j) + B(i, j)", ""},
      {"ScaleIntoCsrOnThreads", "tensor Y(I, J) : csr of float32\n", "Y(i, j) = A(i, j) * 0.5",
       "parallelize(i, CPUThread, NoRaces)"},
      {"Sddmm", "tensor C(I, K) : dense of float16\ntensor D(K, J) : dense of float16\ntensor Y(I, J) : csr of float32\n",
       "Y(i, j) = A(i, j) * C(i, k) * D(k, j)", ""},
      {"Frobenius", "tensor s : dense of float64\n", "s = A(i, j) * A(i, j)", ""},
      {"Builtins", "tensor y(I) : dense of float32\n", "y(i) = abs(A(i, j)) + max(A(i, j), 0.25)", ""},
      {"ColumnSums", "tensor y(J) : dense of float32\n", "y(j) = A(i, j)", ""},
      {"InPlaceUpdate", "tensor x(J) : dense of float16\ntensor y(I) : dense of float32\n",
       "y(i) = A(i, j) * x(j)\ny(i) += A(i, j) * A(i, j)", ""},
  };
}

void PrintTo(const HalfCase& c, std::ostream* out) { *out << c.name; }

const std::vector<std::string> kFormats = {"csr", "dcsr", "coo", "{dense, compressed} order (1, 0)", "dense"};

class Float16Inputs : public ::testing::TestWithParam<HalfCase> {};

TEST_P(Float16Inputs, AreReadAsFloat32) {
  const HalfCase& c = GetParam();
  const rt::Coo bus = realMatrix("494_bus.mtx");
  struct Drawn {
    std::string name;
    rt::Coo a;
    int k;
  };
  const std::vector<Drawn> drawn{{"one entry", randomSparse({1, 1}, 1.0, 1), 1},
                                 {"40 x 30, empty rows", randomSparse({40, 30}, 0.1, 2), 5},
                                 {"494_bus", bus, 3}};
  uint64_t seed = 10;
  for (const std::string& format : kFormats) {
    const std::string program = withScheduleIfAny(
        "tensor A(I, J) : " + format + " of float16\n" + c.declarations + c.statement + "\n", c.schedule);
    for (const Drawn& input : drawn) {
      SCOPED_TRACE(c.statement + ", A " + format + ", " + input.name);
      const int32_t rows = input.a.dims[0], columns = input.a.dims[1];
      std::map<std::string, rt::Coo> tensors{
          {"A", roundedToFloat16(input.a)},
          {"B", roundedToFloat16(c.name == "Spmm"         ? randomDense({columns, input.k}, seed++)
                              : c.name == "SpgemmIntoCsr" ? randomSparse({columns, input.k}, 0.4, seed++)
                                                          : randomSparse({rows, columns}, 0.2, seed++))},
          {"C", roundedToFloat16(randomDense({rows, input.k}, seed++))},
          {"D", roundedToFloat16(randomDense({input.k, columns}, seed++))},
          {"x", roundedToFloat16(randomDense({columns}, seed++))}};
      expectProgramMatchesReference(program, declaredInputs(program, tensors), CompileOptions{}, 1e-5);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Statements, Float16Inputs, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// The values read are the float16 ones: 1 + 2^-11 is stored as 1 (ties to
// even), 1 + 3 * 2^-11 as 1 + 2^-9, and 2^-24, the least subnormal, as
// itself; the sums of a row show each.
TEST(Float16Inputs, ReadTheValuesFloat16Holds) {
  const std::string program =
      "tensor A(I, J) : csr of float16\ntensor y(I) : dense of float64\ny(i) = A(i, j)\n";
  rt::Coo a = rt::Coo::ofShape({3, 2});
  const int32_t at[4][2] = {{0, 0}, {1, 1}, {2, 0}, {2, 1}};
  a.push(at[0], 1.0 + std::ldexp(1.0, -11));
  a.push(at[1], 1.0 + 3 * std::ldexp(1.0, -11));
  a.push(at[2], std::ldexp(1.0, -24));
  a.push(at[3], -65504.0);
  Kernel kernel = compile(Program::fromText(program, "test.tc"));
  Tensor packed = rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float16);
  std::vector<double> y = rt::toDense(kernel.run({{"A", packed}}).at("y"));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 1.0);
  EXPECT_EQ(y[1], 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(y[2], std::ldexp(1.0, -24) - 65504.0);
}

// A finite value float16 would store as infinity is refused where the
// input is packed or converted, naming the value and where it is;
// 65504 and rounding (65519 to 65504) are kept.
TEST(Float16Inputs, AValueOutOfFloat16sRangeIsRefused) {
  rt::Coo a = rt::Coo::ofShape({2, 3});
  const int32_t first[2] = {0, 1}, second[2] = {1, 2};
  a.push(first, 65519.0);
  a.push(second, 70000.0);
  try {
    rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float16);
    FAIL() << "70000 packed as float16";
  } catch (const std::invalid_argument& refused) {
    EXPECT_TRUE(contains(refused.what(), "value 70000.000000 at (1, 2) is out of float16's range (its "
                                         "largest value is 65504)"))
        << refused.what();
  }
  const std::string message = runError("tensor A(I, J) : csr of float16\ntensor y(I) : dense of float32\n"
                                       "y(i) = A(i, j)\n", {{"A", a}});
  EXPECT_TRUE(contains(message, "out of float16's range")) << message;
  a.values[1] = -65504.0;
  Tensor packed = rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float16);
  EXPECT_EQ(rt::toDense(packed), (std::vector<double>{0, 65504, 0, 0, 0, -65504}));
}

// Into a float64 output, float16 values are read and combined as float64:
// 1024 + 2^-14 is exact there, and float32 would round it (its spacing
// at 1024 is 2^-13).
TEST(Float16Inputs, IntoFloat64TheyAreCombinedInFloat64) {
  const std::string program =
      "tensor A(I, J) : csr of float16\ntensor B(I, J) : csr of float16\ntensor Y(I, J) : dense of float64\n"
      "Y(i, j) = A(i, j) + B(i, j)\n";
  rt::Coo a = rt::Coo::ofShape({1, 1}), b = rt::Coo::ofShape({1, 1});
  const int32_t at[2] = {0, 0};
  a.push(at, 1024.0);
  b.push(at, std::ldexp(1.0, -14));
  Kernel kernel = compile(Program::fromText(program, "test.tc"));
  std::vector<double> y = rt::toDense(kernel.run({{"A", rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float16)},
                                                  {"B", rt::pack(b, rt::TensorFormat::csr(), rt::ValueType::Float16)}})
                                          .at("Y"));
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0], 1024.0 + std::ldexp(1.0, -14));
}

TEST(Float16Inputs, AFloat16OutputIsRefused) {
  const std::string message =
      errorOf("tensor A(I, J) : csr of float16\ntensor y(I) : dense of float16\ny(i) = A(i, j)\n");
  EXPECT_TRUE(contains(message, "output y is float16, which tcc reads but does not compute into: declare it float32"))
      << message;
}

}  // namespace
}  // namespace tcc::test
