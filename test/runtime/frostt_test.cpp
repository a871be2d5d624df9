#include "tcc/runtime/frostt.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tcc/runtime/errors.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "test_support.h"

namespace tcc::rt {
namespace {

using test::CoordinateMap;
using test::toMap;

TEST(Frostt, RoundTripsEveryOrderAndElementType) {
  test::TempDir dir;
  std::vector<std::vector<int32_t>> shapes = {{}, {9}, {6, 7}, {5, 4, 6}, {3, 4, 2, 5}};
  for (const auto& dims : shapes) {
    for (ValueType type : test::allValueTypes()) {
      SCOPED_TRACE(std::to_string(dims.size()) + " " + toString(type));
      Coo coo = randomUniform(dims, dims.empty() ? 1.0 : 0.3, 17 + dims.size());
      if (!isFloat(type)) for (double& value : coo.values) value = std::round(value * 100);
      Tensor tensor = pack(coo, TensorFormat::csf(static_cast<int>(dims.size())), type);
      std::string path = dir.file("t.tns");
      writeTns(path, tensor);
      Coo back = readTns(path, dims);
      EXPECT_EQ(back.dims, dims);
      CoordinateMap expected;
      for (const auto& [coordinate, value] : toMap(coo)) expected[coordinate] = test::roundTo(type, value);
      // The file holds the shortest text of each stored value.
      for (double& value : back.values) value = test::roundTo(type, value);
      EXPECT_EQ(toMap(back), expected);
      // Without known dimensions, each is the largest coordinate seen.
      if (!dims.empty()) {
        Coo inferred = readTns(path);
        for (int mode = 0; mode < inferred.order(); ++mode) {
          int32_t largest = 0;
          for (int32_t c : coo.coords[mode]) largest = std::max(largest, c + 1);
          EXPECT_EQ(inferred.dims[mode], largest);
        }
      }
    }
  }
  Coo coo = randomPowerLawTensor({20, 15, 10}, 300, 1.2, 4);
  writeTns(dir.file("c.tns"), coo);
  EXPECT_EQ(toMap(readTns(dir.file("c.tns"), coo.dims)), toMap(coo));
}

TEST(Frostt, TextDetails) {
  test::TempDir dir;
  Coo coo = readTns(dir.write("a.tns", "# comment\n1 2 3 1.5\n\n2 1 1 -2e1\r\n2 1 1 1"));
  EXPECT_EQ(coo.dims, (std::vector<int32_t>{2, 2, 3}));
  EXPECT_EQ(coo.nnz(), 3u);  // repeats are kept; pack sums them
  EXPECT_EQ(toMap(coo), (CoordinateMap{{{0, 1, 2}, 1.5}, {{1, 0, 0}, -19}}));
  Coo scalar = readTns(dir.write("s.tns", "4.25\n"));
  EXPECT_EQ(scalar.order(), 0);
  EXPECT_EQ(scalar.values, (std::vector<double>{4.25}));
  Coo empty = readTns(dir.write("e.tns", ""), {3, 4});
  EXPECT_EQ(empty.dims, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(empty.nnz(), 0u);
}

struct TnsErrorCase {
  std::string name, text;
  std::vector<int32_t> knownDims;
  int64_t line;
  std::string message;
};

TEST(FrosttMalformed, ErrorsNameTheLineAndTheProblem) {
  test::TempDir dir;
  std::vector<TnsErrorCase> cases = {
      {"empty", "", {}, 1, "empty file: a .tns file needs at least one entry to give its order"},
      {"only_comments", "# nothing\n\n", {}, 3, "no entries: a .tns file needs at least one entry to give its order"},
      {"ragged", "1 1 1 2.0\n1 1 3.0\n", {}, 2, "expected 4 fields (3 coordinates and a value), found 3"},
      {"too_long", "1 1 2.0\n1 1 1 3.0\n", {}, 2, "expected 3 fields (2 coordinates and a value), found 4"},
      {"index_zero", "1 1 2.0\n0 1 3.0\n", {}, 2, "coordinate 0 of mode 1 is outside 1..2147483647 (.tns coordinates are 1-based)"},
      {"beyond_known", "1 1 2.0\n3 1 3.0\n", {2, 2}, 2, "coordinate 3 of mode 1 is outside 1..2"},
      {"order_mismatch", "1 1 1 2.0\n", {2, 2}, 1, "entry has 3 coordinates but the tensor has order 2"},
      {"non_numeric_value", "1 1 2.0\n2 2 two\n", {}, 2, "non-numeric value 'two'"},
      {"non_numeric_index", "1 1 2.0\n2 b 2\n", {}, 2, "expected an integer coordinate for mode 2, found 'b'"},
      {"overflowing_index", "1 3000000000 2.0\n", {}, 1, "coordinate 3000000000 of mode 2 is outside 1..2147483647"},
      {"two_scalars", "1.0\n2.0\n", {}, 2, "a scalar .tns file holds exactly one value"},
      {"too_many_modes", "1 1 1 1 1 1 1 1 1 1.0\n", {}, 1, "entry has 9 coordinates; at most 8 modes are supported"},
  };
  for (const TnsErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.write(c.name + ".tns", c.text);
    try {
      readTns(path, c.knownDims);
      FAIL() << "read without error";
    } catch (const FileError& error) {
      EXPECT_EQ(error.line(), c.line) << error.what();
      EXPECT_EQ(error.message(), c.message) << error.what();
    }
  }
}

}  // namespace
}  // namespace tcc::rt

namespace tcc::rt {
namespace {

TEST(ExampleData, BundledFilesReadAndMatchTheirGenerator) {
  std::string folder = std::string(TCC_SOURCE_DIR) + "/examples/data/";
  Coo tensor = readTns(folder + "tensor3_12x10x8.tns");
  EXPECT_EQ(tensor.dims, (std::vector<int32_t>{12, 10, 8}));
  EXPECT_EQ(toMap(tensor), toMap(randomPowerLawTensor({12, 10, 8}, 120, 1.0, 2026)));
  for (const char* name : {"bcsstk01.mtx", "cage5.mtx", "west0497.mtx", "494_bus.mtx", "LF10.mtx"}) {
    EXPECT_EQ(toMap(readMatrixMarket(folder + name)), toMap(readMatrixMarket(test::matrixPath(name)))) << name;
  }
}

}  // namespace
}  // namespace tcc::rt

#include "tcc/runtime/tensor_file.h"

namespace tcc::rt {
namespace {

TEST(TensorFile, ExtensionChoosesTheFormat) {
  test::TempDir dir;
  Coo matrix = randomUniform({5, 7}, 0.3, 2);
  writeTensorFile(dir.file("m.MTX"), matrix);
  EXPECT_EQ(toMap(readTensorFile(dir.file("m.MTX"))), toMap(matrix));
  EXPECT_EQ(toMap(readMatrixMarket(dir.file("m.MTX"))), toMap(matrix));
  Coo tensor = randomUniform({3, 4, 5}, 0.3, 3);
  writeTensorFile(dir.file("t.tns"), pack(tensor, TensorFormat::csf(3)));
  EXPECT_EQ(toMap(readTensorFile(dir.file("t.tns"), {3, 4, 5})), toMap(tensor));
  try {
    readTensorFile(dir.file("m.MTX"), {5, 8});
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.message(), "file holds a 5x7 matrix, but a 5x8 tensor is expected");
  }
  try {
    writeTensorFile(dir.file("t.csv"), tensor);
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.message(), "unknown tensor file type: expected a .mtx (Matrix Market) or .tns (FROSTT) file");
  }
  EXPECT_THROW(writeTensorFile(dir.file("t.mtx"), tensor), std::invalid_argument);  // order 3
}

}  // namespace
}  // namespace tcc::rt
