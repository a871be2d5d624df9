// Explicitly stored zeros are structure (a mask, a symbolic pattern): every
// entry stored at a compressed or singleton level survives writing,
// reading, packing, converting and listing, as in scipy and TACO. Only an
// all-dense tensor's zeros are left out of a coordinate file.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/tensor_file.h"
#include "test_support.h"

namespace tcc::rt {
namespace {

using test::CoordinateMap;
using test::toMap;

void expectSameStorage(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.format(), expected.format());
  ASSERT_EQ(actual.dims(), expected.dims());
  for (int level = 0; level < expected.order(); ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    EXPECT_TRUE(std::ranges::equal(actual.pos(level), expected.pos(level)));
    EXPECT_TRUE(std::ranges::equal(actual.crd(level), expected.crd(level)));
  }
  ASSERT_EQ(actual.nnz(), expected.nnz());
  for (int64_t p = 0; p < expected.nnz(); ++p) ASSERT_EQ(actual.valueAtPosition(p), expected.valueAtPosition(p)) << p;
}

// Random nonzeros plus explicit zeros: some at new coordinates (a whole
// row of them in mode 0's first index), some replacing a stored value.
Coo withExplicitZeros(std::vector<int32_t> dims, uint64_t seed) {
  Coo coo = randomUniform(dims, 0.25, seed);
  for (size_t k = 0; k < coo.nnz(); k += 5) coo.values[k] = 0;
  std::vector<int32_t> coordinate(dims.size(), 0);
  for (int32_t c = 0; c < dims.back(); c += 2) {
    coordinate.back() = c;
    coo.push(coordinate.data(), 0.0);
  }
  coo.sort();
  // One entry per coordinate (pack would sum repeats; keep the test's map simple).
  Coo unique = Coo::ofShape(dims);
  CoordinateMap seen;
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::vector<int32_t> at;
    for (int mode = 0; mode < coo.order(); ++mode) at.push_back(coo.coords[mode][k]);
    if (seen.emplace(at, coo.values[k]).second) unique.push(at.data(), coo.values[k]);
  }
  return unique;
}

int64_t zerosIn(const CoordinateMap& map) {
  return std::count_if(map.begin(), map.end(), [](const auto& entry) { return entry.second == 0; });
}

struct Case {
  std::string name;
  TensorFormat format;
  std::vector<int32_t> dims;
};

std::vector<Case> formatsWithStructure() {
  return {
      {"csr", TensorFormat::csr(), {9, 11}},
      {"csc", TensorFormat::csc(), {9, 11}},
      {"dcsr", TensorFormat::dcsr(), {9, 11}},
      {"dcsc", TensorFormat::dcsc(), {9, 11}},
      {"coo", TensorFormat::coo(2), {9, 11}},
      {"csf3", TensorFormat::csf(3), {5, 6, 7}},
      {"coo3", TensorFormat::coo(3), {5, 6, 7}},
      {"dense_csf3", TensorFormat({LevelSpec::dense(), LevelSpec::compressed(), LevelSpec::compressed()}, {2, 0, 1}),
       {5, 6, 7}},
  };
}

TEST(StoredZeros, SurviveWritingAndReadingInEveryFormat) {
  test::TempDir dir;
  for (const Case& c : formatsWithStructure()) {
    SCOPED_TRACE(c.name);
    Coo coo = withExplicitZeros(c.dims, 7);
    CoordinateMap entries = toMap(coo);
    ASSERT_GT(zerosIn(entries), 3);
    Tensor tensor = pack(coo, c.format);
    ASSERT_EQ(tensor.nnz(), static_cast<int64_t>(coo.nnz()));
    // Listing (what --print shows) holds every stored entry.
    EXPECT_EQ(toMap(unpack(tensor)), entries);
    std::vector<std::string> files = {dir.file(c.name + ".tns")};
    if (c.dims.size() == 2) files.push_back(dir.file(c.name + ".mtx"));
    for (const std::string& path : files) {
      SCOPED_TRACE(path);
      writeTensorFile(path, tensor);
      Coo back = readTensorFile(path, c.dims);
      EXPECT_EQ(back.nnz(), coo.nnz());
      EXPECT_EQ(toMap(back), entries);
      expectSameStorage(pack(back, c.format), tensor);
    }
  }
}

TEST(StoredZeros, SurviveConversionBetweenFormats) {
  Coo coo = withExplicitZeros({9, 11}, 3);
  CoordinateMap entries = toMap(coo);
  Tensor csr = pack(coo, TensorFormat::csr());
  Tensor throughOthers = csr;
  for (const TensorFormat& format : {TensorFormat::csc(), TensorFormat::coo(2), TensorFormat::dcsc(),
                                     TensorFormat::csf(2), TensorFormat::csr()}) {
    SCOPED_TRACE(format.toString());
    throughOthers = convert(throughOthers, format);
    EXPECT_EQ(toMap(unpack(throughOthers)), entries);
  }
  expectSameStorage(throughOthers, csr);
  // {compressed, dense} stores whole rows: every entry is kept, and the
  // rest of each stored row lists as zeros.
  Tensor rows = convert(csr, TensorFormat({LevelSpec::compressed(), LevelSpec::dense()}));
  CoordinateMap listed = toMap(unpack(rows));
  EXPECT_EQ(static_cast<int64_t>(listed.size()), rows.nnz());
  for (const auto& [coordinate, value] : entries) EXPECT_EQ(listed.at(coordinate), value);
  for (const auto& [coordinate, value] : listed) {
    if (!entries.count(coordinate)) EXPECT_EQ(value, 0);
  }
}

TEST(StoredZeros, AnAllDenseTensorLeavesItsZerosOut) {
  test::TempDir dir;
  Coo coo = withExplicitZeros({6, 5}, 9);
  Tensor dense = pack(coo, TensorFormat::dense(2));
  CoordinateMap nonzeros = test::withoutZeros(toMap(coo));
  EXPECT_EQ(toMap(unpack(dense)), nonzeros);
  writeTensorFile(dir.file("dense.mtx"), dense);
  EXPECT_EQ(toMap(readTensorFile(dir.file("dense.mtx"))), nonzeros);
  writeTensorFile(dir.file("dense.tns"), dense);
  EXPECT_EQ(toMap(readTensorFile(dir.file("dense.tns"), {6, 5})), nonzeros);
  // A dense tensor converted to CSR stores its nonzeros only.
  EXPECT_EQ(convert(dense, TensorFormat::csr()).nnz(), static_cast<int64_t>(nonzeros.size()));
}

TEST(StoredZeros, ARealMatrixWithZerosInsertedRoundTrips) {
  test::TempDir dir;
  // fs_183_1 stores 71 zeros of its own; add more at new coordinates and in
  // place of stored values.
  Coo coo = readMatrixMarket(test::matrixPath("fs_183_1.mtx"));
  std::mt19937_64 random(5);
  CoordinateMap entries = toMap(coo);
  for (int k = 0; k < 200; ++k) {
    std::vector<int32_t> at = {static_cast<int32_t>(random() % coo.dims[0]), static_cast<int32_t>(random() % coo.dims[1])};
    entries[at] = 0;
  }
  Coo withZeros = Coo::ofShape(coo.dims);
  for (const auto& [coordinate, value] : entries) withZeros.push(coordinate.data(), value);
  int64_t zeros = zerosIn(entries);
  ASSERT_GT(zeros, 71 + 100);
  for (const TensorFormat& format : {TensorFormat::csr(), TensorFormat::csc(), TensorFormat::dcsr(), TensorFormat::coo(2)}) {
    SCOPED_TRACE(format.toString());
    Tensor tensor = pack(withZeros, format);
    ASSERT_EQ(tensor.nnz(), static_cast<int64_t>(entries.size()));
    std::string path = dir.file("fs_183_1_zeros.mtx");
    writeTensorFile(path, tensor);
    Coo back = readTensorFile(path);
    EXPECT_EQ(back.nnz(), entries.size()) << "the size line or the entries lost stored zeros";
    EXPECT_EQ(toMap(back), entries);
    expectSameStorage(pack(back, format), tensor);
  }
}

}  // namespace
}  // namespace tcc::rt
