// Declared level properties are promises a kernel relies on: validate()
// and pack() refuse storage that breaks them, naming the level and the
// first offending position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "tcc/runtime/frostt.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "test_support.h"

namespace tcc::rt {
namespace {

using ::testing::HasSubstr;

// The same storage described by another format (same level kinds).
Tensor withFormat(const Tensor& tensor, const TensorFormat& format) {
  Tensor result(tensor.dims(), format, tensor.valueType());
  for (int level = 0; level < tensor.order(); ++level) result.levelStorage(level) = tensor.levelStorage(level);
  result.resizeValues(tensor.nnz());
  std::memcpy(result.valuesData(), tensor.valuesData(), tensor.nnz() * byteWidth(tensor.valueType()));
  return result;
}

// A CSR matrix from explicit arrays.
Tensor csrOf(const TensorFormat& format, std::vector<int32_t> dims, std::vector<int64_t> pos,
             std::vector<int32_t> crd) {
  Tensor tensor(dims, format);
  LevelStorage& columns = tensor.levelStorage(1);
  columns.pos = MallocArray<int64_t>(static_cast<int64_t>(pos.size()));
  for (size_t p = 0; p < pos.size(); ++p) columns.pos[p] = pos[p];
  columns.crd = MallocArray<int32_t>(static_cast<int64_t>(crd.size()));
  for (size_t p = 0; p < crd.size(); ++p) columns.crd[p] = crd[p];
  tensor.resizeValues(static_cast<int64_t>(crd.size()));
  for (size_t p = 0; p < crd.size(); ++p) tensor.setValueAtPosition(static_cast<int64_t>(p), 1.0 + p);
  return tensor;
}

std::string validationError(const Tensor& tensor) {
  try {
    tensor.validate();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

// Entries whose (i, j) pairs repeat across k.
Coo pairsRepeatingAcrossK() {
  Coo coo = Coo::ofShape({3, 4, 5});
  int32_t entries[][3] = {{0, 1, 0}, {0, 1, 3}, {0, 2, 1}, {2, 3, 2}, {2, 3, 4}};
  for (size_t k = 0; k < std::size(entries); ++k) coo.push(entries[k], 1.0 + static_cast<double>(k));
  return coo;
}

TensorFormat cooWithUniqueMiddle() {
  return TensorFormat({LevelSpec::compressed(false), LevelSpec::singleton(), LevelSpec::singleton()});
}

TEST(LevelProperties, RepeatedPairsUnderAUniqueMiddleSingletonAreRefused) {
  Coo coo = pairsRepeatingAcrossK();
  // The named COO format (middle level nonunique) holds these entries.
  Tensor coo3 = pack(coo, TensorFormat::coo(3));
  EXPECT_NO_THROW(coo3.validate());
  EXPECT_EQ(toDense(coo3), test::referenceDense(coo));
  // The same storage, declared with a unique middle level, breaks its promise at
  // position 1 of level 1, which repeats (i, j) = (1, 2) (1-based) of position 0.
  std::string error = validationError(withFormat(coo3, cooWithUniqueMiddle()));
  EXPECT_THAT(error, HasSubstr("level 1 (singleton, mode 2) is declared unique"));
  EXPECT_THAT(error, HasSubstr("position 1 repeats the coordinates (1, 2, *) of position 0"));
  // And pack refuses to build it.
  try {
    pack(coo, cooWithUniqueMiddle());
    FAIL() << "packed entries the format cannot hold";
  } catch (const std::invalid_argument& refused) {
    EXPECT_THAT(std::string(refused.what()), HasSubstr("cannot hold these entries"));
    EXPECT_THAT(std::string(refused.what()), HasSubstr("level 1 (singleton, mode 2) is declared unique"));
  }
}

TEST(LevelProperties, RepeatedPairsReadFromATnsFileAreRefused) {
  test::TempDir dir;
  std::string path = dir.write("repeats.tns", "1 2 1 1.0\n1 2 4 2.0\n1 3 2 3.0\n3 4 3 4.0\n3 4 5 5.0\n");
  Coo coo = readTns(path);
  EXPECT_THROW(pack(coo, cooWithUniqueMiddle()), std::invalid_argument);
  EXPECT_EQ(toDense(pack(coo, TensorFormat::coo(3))), test::referenceDense(coo));
}

TEST(LevelProperties, ARepeatedColumnInAUniqueRowIsRefused) {
  TensorFormat csr = TensorFormat::csr();
  Tensor repeated = csrOf(csr, {2, 4}, {0, 3, 4}, {0, 2, 2, 1});
  std::string error = validationError(repeated);
  EXPECT_THAT(error, HasSubstr("level 1 (compressed, mode 2) is declared unique"));
  EXPECT_THAT(error, HasSubstr("position 2 repeats the coordinates (1, 3) of position 1"));
  // Declared nonunique, the same storage keeps its promises.
  TensorFormat nonunique({LevelSpec::dense(), LevelSpec::compressed(false)});
  EXPECT_EQ(validationError(withFormat(repeated, nonunique)), "");
  EXPECT_EQ(toDense(withFormat(repeated, nonunique)), (std::vector<double>{1, 0, 5, 0, 0, 4, 0, 0}));
}

TEST(LevelProperties, ColumnsOutOfOrderInAnOrderedRowAreRefused) {
  Tensor unsorted = csrOf(TensorFormat::csr(), {2, 4}, {0, 1, 3}, {2, 3, 0});
  std::string error = validationError(unsorted);
  EXPECT_THAT(error, HasSubstr("level 1 (compressed, mode 2) is declared ordered"));
  EXPECT_THAT(error, HasSubstr("position 2 holds (2, 1) after (2, 4) at position 1"));
  TensorFormat unordered({LevelSpec::dense(), LevelSpec::compressed(true, false)});
  EXPECT_EQ(validationError(withFormat(unsorted, unordered)), "");
}

TEST(LevelProperties, ARepeatInAnUnorderedUniqueLevelIsFoundAnywhereInItsSegment) {
  TensorFormat unordered({LevelSpec::dense(), LevelSpec::compressed(true, false)});
  Tensor repeated = csrOf(unordered, {2, 5}, {0, 1, 5}, {4, 3, 0, 4, 3});
  std::string error = validationError(repeated);
  EXPECT_THAT(error, HasSubstr("is declared unique"));
  EXPECT_THAT(error, HasSubstr("position 4 repeats the coordinates (2, 4) of position 1"));
  // Equal coordinates in different rows are no repeat.
  EXPECT_EQ(validationError(csrOf(unordered, {2, 5}, {0, 2, 4}, {4, 3, 3, 4})), "");
  // A level far wider than what it stores is checked through a hash table.
  Tensor wide = csrOf(unordered, {2, 100000}, {0, 1, 5}, {4, 99999, 0, 4, 99999});
  EXPECT_THAT(validationError(wide), HasSubstr("position 4 repeats the coordinates (2, 100000) of position 1"));
  EXPECT_EQ(validationError(csrOf(unordered, {2, 100000}, {0, 2, 4}, {4, 99999, 99999, 4})), "");
}

TEST(LevelProperties, ARepeatInAnUnorderedLevelBelowANonuniqueOneIsFound) {
  // {compressed(nonunique), singleton(unordered)}: row 1 at positions 0..2 holds columns 4, 2, 4.
  TensorFormat format({LevelSpec::compressed(false), LevelSpec::singleton(true, false)});
  Tensor tensor({3, 5}, format);
  LevelStorage& rows = tensor.levelStorage(0);
  rows.pos = MallocArray<int64_t>(2);
  rows.pos[1] = 4;
  rows.crd = MallocArray<int32_t>(4);
  LevelStorage& columns = tensor.levelStorage(1);
  columns.crd = MallocArray<int32_t>(4);
  int32_t entries[][2] = {{0, 3}, {0, 1}, {0, 3}, {2, 1}};
  for (int p = 0; p < 4; ++p) {
    rows.crd[p] = entries[p][0];
    columns.crd[p] = entries[p][1];
  }
  tensor.resizeValues(4);
  EXPECT_THAT(validationError(tensor), HasSubstr("position 2 repeats the coordinates (1, 4) of position 0"));
  columns.crd[2] = 0;
  EXPECT_EQ(validationError(tensor), "");
}

TEST(LevelProperties, CooColumnsMustNotDecreaseWithinARow) {
  // {compressed(nonunique), singleton}: row 0 at positions 0..2, columns 3, 1, 4.
  Coo coo = Coo::ofShape({2, 5});
  int32_t entries[][2] = {{0, 3}, {0, 1}, {0, 4}, {1, 0}};
  Tensor tensor(coo.dims, TensorFormat::coo(2));
  LevelStorage& rows = tensor.levelStorage(0);
  rows.pos = MallocArray<int64_t>(2);
  rows.pos[1] = 4;
  rows.crd = MallocArray<int32_t>(4);
  LevelStorage& columns = tensor.levelStorage(1);
  columns.crd = MallocArray<int32_t>(4);
  for (int p = 0; p < 4; ++p) {
    rows.crd[p] = entries[p][0];
    columns.crd[p] = entries[p][1];
  }
  tensor.resizeValues(4);
  std::string error = validationError(tensor);
  EXPECT_THAT(error, HasSubstr("level 1 (singleton, mode 2) is declared ordered"));
  EXPECT_THAT(error, HasSubstr("position 1 holds (1, 2) after (1, 4) at position 0"));
  TensorFormat unordered({LevelSpec::compressed(false), LevelSpec::singleton(true, false)});
  EXPECT_EQ(validationError(withFormat(tensor, unordered)), "");
  // Rows out of order break the first level's promise.
  rows.crd[3] = 0;
  rows.crd[0] = 1;
  EXPECT_THAT(validationError(withFormat(tensor, unordered)),
              HasSubstr("level 0 (compressed(nonunique), mode 1) is declared ordered"));
}

TEST(LevelProperties, AUniqueLevelBelowANonuniqueOneRepeatsNothingAcrossSegments) {
  // {compressed(nonunique), compressed}: row 1 appears twice, both times with column 2.
  TensorFormat format({LevelSpec::compressed(false), LevelSpec::compressed()});
  Tensor tensor({2, 3}, format);
  LevelStorage& rows = tensor.levelStorage(0);
  rows.pos = MallocArray<int64_t>(2);
  rows.pos[1] = 2;
  rows.crd = MallocArray<int32_t>(2);
  rows.crd[0] = 1;
  rows.crd[1] = 1;
  LevelStorage& columns = tensor.levelStorage(1);
  columns.pos = MallocArray<int64_t>(3);
  columns.pos[1] = 1;
  columns.pos[2] = 2;
  columns.crd = MallocArray<int32_t>(2);
  columns.crd[0] = 2;
  columns.crd[1] = 2;
  tensor.resizeValues(2);
  EXPECT_THAT(validationError(tensor), HasSubstr("position 1 repeats the coordinates (2, 3) of position 0"));
  columns.crd[1] = 0;
  EXPECT_THAT(validationError(tensor), HasSubstr("declared ordered"));
  columns.crd[0] = 0;
  columns.crd[1] = 2;
  EXPECT_EQ(validationError(tensor), "");
}

TEST(LevelProperties, BrokenPosAndCrdArraysAreRefused) {
  EXPECT_THAT(validationError(csrOf(TensorFormat::csr(), {2, 4}, {0, 3, 2}, {0, 1})), HasSubstr("pos decreases at 2"));
  EXPECT_THAT(validationError(csrOf(TensorFormat::csr(), {2, 4}, {0, 1, 3}, {0, 1})), HasSubstr("crd has 2 entries, expected 3"));
  EXPECT_THAT(validationError(csrOf(TensorFormat::csr(), {2, 4}, {0, 1, 2}, {0, 4})), HasSubstr("crd[1] = 4 is outside 0..3"));
}

TEST(LevelProperties, PackedTensorsKeepTheirPromisesInEveryFormat) {
  std::vector<TensorFormat> formats = {
      TensorFormat::csr(), TensorFormat::csc(), TensorFormat::dcsr(), TensorFormat::dcsc(), TensorFormat::coo(2),
      TensorFormat({LevelSpec::compressed(), LevelSpec::dense()}),
      TensorFormat({LevelSpec::dense(), LevelSpec::compressed(false, false)})};
  for (const char* name : {"west0497.mtx", "fs_183_1.mtx", "lp_e226.mtx"}) {
    Coo coo = readMatrixMarket(test::matrixPath(name));
    for (const TensorFormat& format : formats) {
      SCOPED_TRACE(std::string(name) + " " + format.toString());
      EXPECT_NO_THROW(pack(coo, format).validate());
    }
  }
  Coo tensor = randomPowerLawTensor({20, 15, 10}, 300, 1.2, 4);
  for (const TensorFormat& format : {TensorFormat::coo(3), TensorFormat::csf(3)}) {
    EXPECT_NO_THROW(pack(tensor, format).validate()) << format.toString();
  }
}

}  // namespace
}  // namespace tcc::rt
