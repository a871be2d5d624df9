#include "tcc/runtime/pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/random.h"
#include "test_support.h"

namespace tcc::rt {
namespace {

using test::allValueTypes;
using test::referenceDense;
using test::roundTo;
using test::toMap;

struct NamedFormat {
  std::string name;
  TensorFormat format;
};

// Every named format of each order, plus mixed levels and mode orderings.
std::vector<NamedFormat> formatsOfOrder(int order) {
  std::vector<NamedFormat> formats = {
      {"dense", TensorFormat::dense(order)},
      {"coo", TensorFormat::coo(order)},
      {"csf", TensorFormat::csf(order)},
  };
  auto reversed = [&] {
    std::vector<int> ordering(order);
    for (int l = 0; l < order; ++l) ordering[l] = order - 1 - l;
    return ordering;
  };
  if (order == 1) formats.push_back({"sparseVector", TensorFormat::sparseVector()});
  if (order == 2) {
    formats.push_back({"csr", TensorFormat::csr()});
    formats.push_back({"csc", TensorFormat::csc()});
    formats.push_back({"dcsr", TensorFormat::dcsr()});
    formats.push_back({"dcsc", TensorFormat::dcsc()});
    formats.push_back({"coo_transposed", TensorFormat(TensorFormat::coo(2).levels, {1, 0})});
    formats.push_back({"dense_colmajor", TensorFormat(TensorFormat::dense(2).levels, {1, 0})});
    formats.push_back({"sparse_dense", TensorFormat({LevelSpec::compressed(), LevelSpec::dense()})});
  }
  if (order >= 2) {
    formats.push_back({"csf_reversed", TensorFormat(TensorFormat::csf(order).levels, reversed())});
    formats.push_back({"coo_reversed", TensorFormat(TensorFormat::coo(order).levels, reversed())});
    std::vector<LevelSpec> mixed = {LevelSpec::dense()};
    for (int l = 1; l < order; ++l) mixed.push_back(l % 2 ? LevelSpec::compressed() : LevelSpec::dense());
    formats.push_back({"mixed", TensorFormat(mixed)});
    std::vector<int> rotated(order);
    for (int l = 0; l < order; ++l) rotated[l] = (l + 1) % order;
    formats.push_back({"mixed_rotated", TensorFormat(mixed, rotated)});
  }
  if (order >= 3) {
    // {dense, compressed(nonunique), singleton, ...}
    std::vector<LevelSpec> denseCoo = {LevelSpec::dense(), LevelSpec::compressed(false)};
    for (int l = 2; l < order; ++l) denseCoo.push_back(LevelSpec::singleton(l == order - 1));
    formats.push_back({"dense_then_coo", TensorFormat(denseCoo)});
  }
  return formats;
}

std::vector<int32_t> dimsOfOrder(int order) {
  std::vector<int32_t> all = {7, 5, 6, 4};
  return std::vector<int32_t>(all.begin(), all.begin() + order);
}

// Random values made integral for the integer element types.
Coo randomFor(ValueType type, std::vector<int32_t> dims, double density, uint64_t seed) {
  Coo coo = randomUniform(dims, density, seed);
  if (!isFloat(type)) {
    for (double& value : coo.values) value = std::round(value * 8);
  }
  return coo;
}

// Unpacking lists every stored position, zeros included (they are
// structure), except an all-dense tensor's zeros. So the listing holds
// exactly the reference's entries plus, where a dense level lies below a
// sparse one, the zeros of the dense blocks stored there.
void expectUnpackedAsStored(const Tensor& tensor, const test::CoordinateMap& reference) {
  Coo listed = unpack(tensor);
  test::CoordinateMap unpacked = toMap(listed);
  if (tensor.format().isAllDense()) {
    EXPECT_EQ(unpacked, test::withoutZeros(reference));
    return;
  }
  EXPECT_EQ(static_cast<int64_t>(listed.nnz()), tensor.nnz()) << "a stored position is missing from the listing";
  bool denseBelowSparse = false, sparseSeen = false;
  for (const LevelSpec& level : tensor.format().levels) {
    sparseSeen |= level.kind != TCC_LEVEL_DENSE;
    denseBelowSparse |= sparseSeen && level.kind == TCC_LEVEL_DENSE;
  }
  if (!denseBelowSparse) {
    EXPECT_EQ(unpacked, reference);
    return;
  }
  for (const auto& [coordinate, value] : reference) {
    auto found = unpacked.find(coordinate);
    ASSERT_NE(found, unpacked.end()) << "a stored entry is missing from the listing";
    EXPECT_EQ(found->second, value);
  }
  for (const auto& [coordinate, value] : unpacked) {
    if (!reference.count(coordinate)) EXPECT_EQ(value, 0) << "an entry nobody stored";
  }
}

void expectDenseNear(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_EQ(actual[i], expected[i]) << "at " << i;
}

class PackRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(PackRoundTrip, EveryFormatAndTypeMatchesTheDenseReference) {
  int order = GetParam();
  for (ValueType type : allValueTypes()) {
    Coo coo = randomFor(type, dimsOfOrder(order), order == 0 ? 1.0 : 0.3, 100 + order);
    std::vector<double> expected = referenceDense(coo);
    for (double& value : expected) value = roundTo(type, value);
    for (const NamedFormat& named : formatsOfOrder(order)) {
      SCOPED_TRACE(named.name + " " + toString(type));
      Tensor tensor = pack(coo, named.format, type);
      EXPECT_NO_THROW(tensor.validate());
      EXPECT_EQ(tensor.valueType(), type);
      expectDenseNear(toDense(tensor), expected);
      // Unpack gives back exactly the (rounded) entries.
      test::CoordinateMap reference;
      for (const auto& [coordinate, value] : toMap(coo)) reference[coordinate] = roundTo(type, value);
      expectUnpackedAsStored(tensor, reference);
      // valueAt at every stored coordinate and at a few empty ones.
      for (const auto& [coordinate, value] : reference) {
        ASSERT_EQ(tensor.valueAt(coordinate), value);
      }
      // Conversion into every other format of the same order.
      for (const NamedFormat& target : formatsOfOrder(order)) {
        SCOPED_TRACE("to " + target.name);
        Tensor converted = convert(tensor, target.format);
        EXPECT_EQ(converted.format(), target.format);
        expectDenseNear(toDense(converted), expected);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, PackRoundTrip, ::testing::Values(0, 1, 2, 3, 4));

TEST(Pack, CsrArraysMatchAHandBuiltCsr) {
  Coo coo = randomUniform({9, 11}, 0.25, 7);
  Tensor csr = pack(coo, TensorFormat::csr());
  // Independent construction: count per row, prefix sum, sorted columns.
  std::vector<int64_t> rowPointer(10, 0);
  for (int32_t row : coo.coords[0]) ++rowPointer[row + 1];
  for (int i = 0; i < 9; ++i) rowPointer[i + 1] += rowPointer[i];
  auto map = toMap(coo);
  std::vector<int32_t> columns;
  for (const auto& [coordinate, value] : map) columns.push_back(coordinate[1]);
  EXPECT_EQ(std::vector<int64_t>(csr.pos(1).begin(), csr.pos(1).end()), rowPointer);
  EXPECT_EQ(std::vector<int32_t>(csr.crd(1).begin(), csr.crd(1).end()), columns);
  EXPECT_TRUE(csr.pos(0).empty());
  EXPECT_EQ(csr.nnz(), static_cast<int64_t>(coo.nnz()));
}

TEST(Pack, CscStoresColumnsOutermost) {
  Coo coo = Coo::ofShape({2, 3});
  int32_t a[2] = {1, 0}, b[2] = {0, 2}, c[2] = {0, 0};
  coo.push(a, 1.5);
  coo.push(b, 2.5);
  coo.push(c, 3.5);
  Tensor csc = pack(coo, TensorFormat::csc());
  EXPECT_EQ(std::vector<int64_t>(csc.pos(1).begin(), csc.pos(1).end()), (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(std::vector<int32_t>(csc.crd(1).begin(), csc.crd(1).end()), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(std::vector<double>(csc.values<double>().begin(), csc.values<double>().end()),
            (std::vector<double>{3.5, 1.5, 2.5}));
}

TEST(Pack, DuplicatesAreSummedOrRejected) {
  Coo coo = Coo::ofShape({3, 3});
  int32_t a[2] = {1, 2};
  coo.push(a, 1.25);
  coo.push(a, 2.5);
  for (const auto& named : formatsOfOrder(2)) {
    EXPECT_EQ(pack(coo, named.format).valueAt({1, 2}), 3.75) << named.name;
  }
  try {
    pack(coo, TensorFormat::csr(), ValueType::Float64, Duplicates::Reject);
    FAIL() << "expected a duplicate error";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "duplicate entry at coordinate (1, 2) (0-based)");
  }
}

TEST(Pack, AStoredNegativeZeroKeepsItsSign) {
  Coo coo = Coo::ofShape({3, 3});
  int32_t lone[2] = {0, 1}, twice[2] = {2, 0}, cancelling[2] = {1, 1};
  coo.push(lone, -0.0);
  coo.push(twice, -0.0);
  coo.push(twice, -0.0);
  coo.push(cancelling, 1.5);
  coo.push(cancelling, -1.5);
  for (const auto& named : formatsOfOrder(2)) {
    if (named.format.isAllDense()) continue;  // a dense format keeps no zeros of its own
    Tensor packed = pack(coo, named.format);
    EXPECT_TRUE(std::signbit(packed.valueAt({0, 1}))) << named.name;
    EXPECT_TRUE(std::signbit(packed.valueAt({2, 0}))) << named.name;  // -0 + -0 = -0
    EXPECT_FALSE(std::signbit(packed.valueAt({1, 1}))) << named.name;  // 1.5 + -1.5 = +0
    Tensor converted = convert(packed, TensorFormat::csc());
    EXPECT_TRUE(std::signbit(converted.valueAt({0, 1}))) << named.name;
    EXPECT_TRUE(std::signbit(converted.valueAt({2, 0}))) << named.name;
  }
}

TEST(ToDense, AStoredNegativeZeroKeepsItsSign) {
  Coo coo = Coo::ofShape({3, 3});
  int32_t lone[2] = {0, 1}, twice[2] = {2, 0}, cancelling[2] = {1, 1}, plusAfterMinus[2] = {2, 2};
  coo.push(lone, -0.0);
  coo.push(twice, -0.0);
  coo.push(twice, -0.0);
  coo.push(cancelling, 1.5);
  coo.push(cancelling, -1.5);
  coo.push(plusAfterMinus, -0.0);
  coo.push(plusAfterMinus, 0.0);
  // Row-major cells: (0, 1) = 1, (1, 1) = 4, (2, 0) = 6, (2, 2) = 8.
  auto expectSigns = [](const std::vector<double>& dense, const std::string& what) {
    ASSERT_EQ(dense.size(), 9u) << what;
    for (size_t cell = 0; cell < dense.size(); ++cell) {
      EXPECT_EQ(dense[cell], 0.0) << what << ", cell " << cell;
      EXPECT_EQ(std::signbit(dense[cell]), cell == 1 || cell == 6) << what << ", cell " << cell;
    }
  };
  expectSigns(toDense(coo), "the coordinate list");  // -0 + -0 = -0, 1.5 + -1.5 = +0, -0 + +0 = +0
  for (const auto& named : formatsOfOrder(2)) {
    if (named.format.isAllDense()) continue;  // a dense format keeps no zeros of its own
    expectSigns(toDense(pack(coo, named.format)), named.name);
  }
  // A dense tensor keeps the -0.0 written into it.
  Tensor dense = pack(Coo::ofShape({3, 3}), TensorFormat::dense(2));
  dense.setValueAtPosition(5, -0.0);
  EXPECT_TRUE(std::signbit(toDense(dense)[5]));
  EXPECT_FALSE(std::signbit(toDense(dense)[4]));
}

TEST(Pack, RejectsInconsistentInput) {
  Coo coo = Coo::ofShape({3, 3});
  int32_t outside[2] = {3, 0};
  coo.push(outside, 1.0);
  EXPECT_THROW(pack(coo, TensorFormat::csr()), std::invalid_argument);
  Coo fine = randomUniform({3, 3}, 0.5, 1);
  EXPECT_THROW(pack(fine, TensorFormat::csf(3)), std::invalid_argument);
  EXPECT_THROW(pack(fine, TensorFormat(TensorFormat::csr().levels, {0, 0})), std::invalid_argument);
  Coo fractional = Coo::ofShape({2});
  int32_t zero[1] = {0};
  fractional.push(zero, 0.5);
  EXPECT_THROW(pack(fractional, TensorFormat::dense(1), ValueType::Int32), std::invalid_argument);
  Coo huge = Coo::ofShape({2});
  huge.push(zero, 3e9);
  EXPECT_THROW(pack(huge, TensorFormat::dense(1), ValueType::Int32), std::invalid_argument);
  EXPECT_NO_THROW(pack(huge, TensorFormat::dense(1), ValueType::Int64));
}

TEST(Pack, SingletonThatWouldNeedTwoCoordinatesIsRefused) {
  Coo coo = Coo::ofShape({2, 4});
  int32_t a[2] = {0, 1}, b[2] = {0, 3};
  coo.push(a, 1);
  coo.push(b, 2);
  TensorFormat oneColumnPerRow({LevelSpec::dense(), LevelSpec::singleton()});
  EXPECT_THROW(pack(coo, oneColumnPerRow), std::invalid_argument);
  // One entry per row fits (the empty row is padded with an explicit zero).
  Coo single = Coo::ofShape({2, 4});
  single.push(b, 2);
  Tensor tensor = pack(single, oneColumnPerRow);
  EXPECT_EQ(tensor.valueAt({0, 3}), 2);
  EXPECT_EQ(tensor.valueAt({1, 0}), 0);
  // The padding is stored, so it is listed (and a file written from the
  // tensor reads back into the same storage).
  EXPECT_EQ(unpack(tensor).nnz(), 2u);
}

TEST(Pack, ExplicitZerosInSparseLevelsSurviveUnpack) {
  Coo coo = Coo::ofShape({3, 3});
  int32_t a[2] = {2, 1}, b[2] = {0, 0};
  coo.push(a, 0.0);
  coo.push(b, 4.0);
  EXPECT_EQ(unpack(pack(coo, TensorFormat::dcsr())).nnz(), 2u);
  EXPECT_EQ(unpack(pack(coo, TensorFormat::csr())).nnz(), 2u);
  EXPECT_EQ(unpack(pack(coo, TensorFormat::csc())).nnz(), 2u);
  EXPECT_EQ(unpack(pack(coo, TensorFormat::dense(2))).nnz(), 1u);
}

TEST(Pack, Int64ValuesBeyondDoublePrecisionSurviveConversion) {
  Tensor tensor({4}, TensorFormat::dense(1), ValueType::Int64);
  int64_t large = (int64_t{1} << 60) + 1;
  tensor.values<int64_t>()[2] = large;
  Tensor sparse = convert(tensor, TensorFormat::sparseVector());
  ASSERT_EQ(sparse.nnz(), 1);
  EXPECT_EQ(sparse.values<int64_t>()[0], large);
  Tensor back = convert(sparse, TensorFormat::dense(1));
  EXPECT_EQ(back.values<int64_t>()[2], large);
}

TEST(Pack, DenseArraysRoundTrip) {
  std::vector<int32_t> dims = {3, 4, 2};
  Coo coo = randomUniform(dims, 0.4, 11);
  std::vector<double> dense = referenceDense(coo);
  for (const auto& named : formatsOfOrder(3)) {
    Tensor tensor = fromDense(dense, dims, named.format);
    SCOPED_TRACE(named.name);
    EXPECT_EQ(toDense(tensor), dense);
    expectUnpackedAsStored(tensor, toMap(coo));
  }
  EXPECT_EQ(toDense(coo), dense);
  EXPECT_THROW(fromDense(dense, {3, 4}, TensorFormat::csr()), std::invalid_argument);
}

TEST(Pack, RealMatricesRoundTripThroughEveryFormat) {
  for (const char* name : {"bcsstk01.mtx", "cage5.mtx", "west0497.mtx", "ibm32a.mtx", "lp_e226.mtx",
                           "mbeacxc.mtx"}) {
    SCOPED_TRACE(name);
    Coo coo = readMatrixMarket(test::matrixPath(name));
    test::CoordinateMap reference = toMap(coo);
    for (const auto& named : formatsOfOrder(2)) {
      SCOPED_TRACE(named.name);
      Tensor tensor = pack(coo, named.format);
      expectUnpackedAsStored(tensor, reference);
      // Converting keeps every stored entry, explicit zeros included.
      Tensor dcsc = convert(tensor, TensorFormat::dcsc());
      expectUnpackedAsStored(dcsc, toMap(unpack(tensor)));
    }
  }
}

TEST(Pack, RealMatricesInEveryElementType) {
  for (const char* name : {"cage5.mtx", "west0497.mtx", "Franz6_id1959_aug.mtx"}) {
    Coo coo = readMatrixMarket(test::matrixPath(name));
    bool integral = std::all_of(coo.values.begin(), coo.values.end(),
                                [](double value) { return value == std::trunc(value); });
    // float16 holds magnitudes below 65520 (larger ones would be infinity):
    // west0497's 689300 is refused.
    bool beyondFloat16 = std::any_of(coo.values.begin(), coo.values.end(),
                                     [](double value) { return std::abs(value) >= 65520; });
    for (ValueType type : allValueTypes()) {
      if (!isFloat(type) && !integral) continue;
      for (const TensorFormat& format : {TensorFormat::csr(), TensorFormat::dcsc(), TensorFormat::coo(2)}) {
        SCOPED_TRACE(std::string(name) + " " + toString(type) + " " + format.toString());
        if (type == ValueType::Float16 && beyondFloat16) {
          EXPECT_THROW(pack(coo, format, type), std::invalid_argument);
          continue;
        }
        Tensor tensor = pack(coo, format, type);
        test::CoordinateMap expected;
        for (const auto& [coordinate, value] : toMap(coo)) expected[coordinate] = roundTo(type, value);
        EXPECT_EQ(toMap(unpack(tensor)), expected);
        EXPECT_EQ(toMap(unpack(convert(tensor, TensorFormat::csf(2), ValueType::Float64))), expected);
      }
    }
  }
}

// A kernel written against the C ABI only: y = A x for a CSR matrix.
void abiSpmv(const tcc_tensor* a, const double* x, double* y) {
  const tcc_level& rows = a->levels[0];
  const tcc_level& cols = a->levels[1];
  const double* values = static_cast<const double*>(a->vals);
  for (int i = 0; i < rows.size; ++i) {
    y[i] = 0;
    for (long long p = cols.pos[i]; p < cols.pos[i + 1]; ++p) y[i] += values[p] * x[cols.crd[p]];
  }
}

TEST(Abi, KernelReadsStorageThroughTheView) {
  Coo coo = readMatrixMarket(test::matrixPath("west0497.mtx"));
  Tensor csr = pack(coo, TensorFormat::csr());
  tcc_tensor view = csr.abiView();
  EXPECT_EQ(view.order, 2);
  EXPECT_EQ(view.datatype, TCC_FLOAT64);
  EXPECT_EQ(view.levels[1].kind, TCC_LEVEL_COMPRESSED);
  std::vector<double> x(coo.dims[1]);
  for (size_t j = 0; j < x.size(); ++j) x[j] = 1.0 + 0.01 * j;
  std::vector<double> y(coo.dims[0]);
  abiSpmv(&view, x.data(), y.data());
  std::vector<double> expected(coo.dims[0], 0.0);
  for (size_t k = 0; k < coo.nnz(); ++k) expected[coo.coords[0][k]] += coo.values[k] * x[coo.coords[1][k]];
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-12 * (1 + std::abs(expected[i])));
}

template <typename T>
T* mallocCopy(std::vector<T> values) {
  T* buffer = static_cast<T*>(std::malloc(sizeof(T) * (values.size() + 1)));
  std::memcpy(buffer, values.data(), sizeof(T) * values.size());
  return buffer;
}

TEST(Abi, AdoptTakesKernelBuffers) {
  // What a kernel assembling a 3x4 DCSR output would hand back.
  tcc_tensor out;
  std::memset(&out, 0, sizeof out);
  out.order = 2;
  out.datatype = TCC_FLOAT32;
  out.dims[0] = 3;
  out.dims[1] = 4;
  out.mode_ordering[0] = 0;
  out.mode_ordering[1] = 1;
  out.levels[0] = {TCC_LEVEL_COMPRESSED, 3, mallocCopy<long long>({0, 2}), mallocCopy<int>({0, 2}), 2, 2};
  out.levels[1] = {TCC_LEVEL_COMPRESSED, 4, mallocCopy<long long>({0, 1, 3}), mallocCopy<int>({3, 0, 1}), 3, 3};
  out.vals = mallocCopy<float>({1.5f, 2.5f, -3.0f});
  out.vals_size = 3;
  out.vals_capacity = 3;
  Tensor tensor = Tensor::adopt(std::move(out));
  EXPECT_EQ(out.vals, nullptr);
  EXPECT_EQ(out.levels[0].pos, nullptr);
  EXPECT_EQ(tensor.format(), TensorFormat::dcsr());
  EXPECT_EQ(tensor.valueType(), ValueType::Float32);
  EXPECT_EQ(tensor.valueAt({0, 3}), 1.5);
  EXPECT_EQ(tensor.valueAt({2, 0}), 2.5);
  EXPECT_EQ(tensor.valueAt({2, 1}), -3.0);
  EXPECT_EQ(tensor.valueAt({1, 1}), 0.0);
}

TEST(Abi, AdoptRejectsMalformedStorageAndFreesIt) {
  tcc_tensor out;
  std::memset(&out, 0, sizeof out);
  out.order = 1;
  out.datatype = TCC_FLOAT64;
  out.dims[0] = 4;
  out.levels[0] = {TCC_LEVEL_COMPRESSED, 4, mallocCopy<long long>({0, 2}), mallocCopy<int>({1, 9}), 2, 2};
  out.vals = mallocCopy<double>({1.0, 2.0});
  out.vals_size = 2;
  EXPECT_THROW(Tensor::adopt(std::move(out)), std::invalid_argument);  // crd 9 >= 4; ASan checks the free
}

TEST(Abi, ReleaseThenAdoptMovesOwnershipThroughAKernel) {
  Coo coo = randomUniform({6, 9}, 0.3, 21);
  Tensor original = pack(coo, TensorFormat::csr(), ValueType::Float32);
  std::vector<double> expected = toDense(original);
  tcc_tensor handed = std::move(original).release();
  EXPECT_EQ(original.order(), 0);
  // A kernel growing the crd and values buffers with realloc.
  handed.levels[1].crd = static_cast<int*>(std::realloc(handed.levels[1].crd, sizeof(int) * 1000));
  handed.levels[1].crd_capacity = 1000;
  handed.vals = std::realloc(handed.vals, sizeof(float) * 1000);
  handed.vals_capacity = 1000;
  Tensor back = Tensor::adopt(std::move(handed));
  EXPECT_EQ(toDense(back), expected);
  EXPECT_EQ(back.format(), TensorFormat::csr());
  EXPECT_EQ(back.levelStorage(1).crd.capacity(), 1000);
}

TEST(Tensor, EmptyTensorAndScalar) {
  Tensor empty({5, 6}, TensorFormat::dcsc(), ValueType::Int32);
  EXPECT_EQ(empty.nnz(), 0);
  EXPECT_NO_THROW(empty.validate());
  EXPECT_EQ(empty.valueAt({4, 5}), 0);
  Tensor scalar;
  EXPECT_EQ(scalar.order(), 0);
  EXPECT_EQ(scalar.nnz(), 1);
  scalar.setValueAtPosition(0, 2.5);
  EXPECT_EQ(scalar.valueAt(std::span<const int32_t>()), 2.5);
  EXPECT_THROW(empty.valueAt({5, 0}), std::out_of_range);
}

TEST(Tensor, HalfConversionMatchesTheCompiler) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    _Float16 half;
    uint16_t pattern = static_cast<uint16_t>(bits);
    std::memcpy(&half, &pattern, 2);
    float expected = static_cast<float>(half);
    float actual = halfToFloat(pattern);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(actual));
      continue;
    }
    ASSERT_EQ(actual, expected) << bits;
    ASSERT_EQ(floatToHalf(expected), pattern) << bits;
  }
  Coo coo = randomUniform({2000}, 1.0, 3);
  for (double value : coo.values) {
    for (float scaled : {static_cast<float>(value), static_cast<float>(value * 1e-6),
                         static_cast<float>(value * 7e4), static_cast<float>(value * 3e-5)}) {
      _Float16 reference = static_cast<_Float16>(scaled);
      uint16_t referenceBits;
      std::memcpy(&referenceBits, &reference, 2);
      ASSERT_EQ(floatToHalf(scaled), referenceBits) << scaled;
    }
  }
}

// Values beyond float16's range are scaled by the largest magnitude into
// [-1, 1]; values within [-1, 1] are only rounded.
TEST(Tensor, HeldByFloat16) {
  EXPECT_EQ(heldByFloat16({4e5, -2e5, 0.1, 0}), (std::vector<double>{1.0, -0.5, halfToFloat(floatToHalf(2.5e-7f)), 0.0}));
  EXPECT_EQ(heldByFloat16({0.1, -1}), (std::vector<double>{halfToFloat(floatToHalf(0.1f)), -1.0}));
  for (double value : heldByFloat16(randomUniform({500}, 1.0, 4).values))
    EXPECT_EQ(value, halfToFloat(floatToHalf(static_cast<float>(value))));
}

}  // namespace
}  // namespace tcc::rt
