#include "tcc/runtime/matrix_market.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "tcc/runtime/errors.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "test_support.h"

namespace tcc::rt {
namespace {

using test::CoordinateMap;
using test::toMap;

struct ErrorCase {
  std::string name;
  std::string text;  // file contents; empty name of a shared file when `shared`
  int64_t line;
  std::string message;
};

void expectFileError(const std::string& path, int64_t line, const std::string& message) {
  try {
    Coo coo = readMatrixMarket(path);
    FAIL() << path << " read without error (" << coo.nnz() << " entries)";
  } catch (const FileError& error) {
    EXPECT_EQ(error.path(), path);
    EXPECT_EQ(error.line(), line) << error.what();
    EXPECT_EQ(error.message(), message) << error.what();
    std::string prefix = path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message;
    EXPECT_EQ(std::string(error.what()).substr(0, prefix.size()), prefix);
  }
}

// The shared malformed files that must be refused, with the line at fault.
TEST(MatrixMarketMalformed, SharedFilesAreRefusedWithFileAndLine) {
  std::vector<ErrorCase> cases = {
      {"bad_header_mongoose.mtx", "", 1, "unknown symmetry 'bogus': expected 'general', 'symmetric' or 'skew-symmetric'"},
      {"complex.mtx", "", 1, "complex matrices are not supported: tcc reads the real, integer and pattern fields"},
      {"full_noheader.mtx", "", 1, "missing '%%MatrixMarket' header on the first line"},
      {"west0067_noheader.mtx", "", 1, "missing '%%MatrixMarket' header on the first line"},
      {"mangled1.mtx", "", 1, "unsupported object 'mangled': expected 'matrix'"},
      {"mangled2.mtx", "", 1, "unknown format 'mangled': expected 'coordinate' or 'array'"},
      {"mangled3.mtx", "", 1, "unknown field 'mangled': expected 'real', 'integer' or 'pattern'"},
      {"mangled4.mtx", "", 1, "unknown symmetry 'mangled': expected 'general', 'symmetric' or 'skew-symmetric'"},
      {"mangled5.mtx", "", 1, "hermitian symmetry applies only to complex matrices"},
      {"mangled6.mtx", "", 1, "hermitian symmetry applies only to complex matrices"},
      {"mangled7.mtx", "", 5, "missing value"},
      {"mangled8.mtx", "", 4, "size line must hold 'rows columns entries'"},
      {"mangled9.mtx", "", 4, "symmetric matrix must be square, not 3x4"},
      {"mangled10.mtx", "", 6, "file ends after 2 of 3 entries"},
      {"mangled11.mtx", "", 5, "expected an integer column index, found 'zero'"},
      {"mangled12.mtx", "", 5, "missing value"},
      {"mangled13.mtx", "", 7, "column index 9999 is outside 1..4"},
      {"mangled15.mtx", "", 5, "unexpected text '.959' after the value (array files hold one value per line)"},
      {"mangled16.mtx", "", 5, "unexpected text '.959' after the value (array files hold one value per line)"},
      {"mangled_format.mtx", "", 1, "the 'array' format cannot have the 'pattern' field"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    expectFileError(test::malformedPath(c.name), c.line, c.message);
  }
}

// Unusual but valid shared files, checked by hand against their text.
TEST(MatrixMarketMalformed, UnusualButValidSharedFilesReadCorrectly) {
  Coo empty = readMatrixMarket(test::malformedPath("empty.mtx"));
  EXPECT_EQ(empty.dims, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(empty.nnz(), 0u);

  // Repeated entries are kept by the reader; pack sums or rejects them.
  Coo repeated = readMatrixMarket(test::malformedPath("mangled14.mtx"));
  EXPECT_EQ(repeated.nnz(), 3u);
  EXPECT_EQ(pack(repeated, TensorFormat::csr()).valueAt({1, 1}), 3.4 + 7.1);
  EXPECT_THROW(pack(repeated, TensorFormat::csr(), ValueType::Float64, Duplicates::Reject),
               std::invalid_argument);

  // Integer files whose GraphBLAS comment names a narrower type: the
  // Matrix Market integer field holds the values as written.
  struct Expected { const char* name; double value41; double value12; };
  for (Expected e : {Expected{"mangled_int8.mtx", -129, 127}, Expected{"mangled_int16.mtx", -32769, 32767},
                     Expected{"mangled_int32.mtx", -2147483649.0, 2147483647},
                     Expected{"mangled_uint8.mtx", 0, 256}, Expected{"mangled_uint16.mtx", 0, 65536},
                     Expected{"mangled_uint32.mtx", 0, 4294967296.0}, Expected{"mangled_bool.mtx", 0, 1}}) {
    SCOPED_TRACE(e.name);
    Coo coo = readMatrixMarket(test::malformedPath(e.name));
    EXPECT_EQ(coo.dims, (std::vector<int32_t>{7, 7}));
    EXPECT_EQ(coo.nnz(), 12u);
    CoordinateMap map = toMap(coo);
    EXPECT_EQ(map.at({3, 0}), e.value41);
    EXPECT_EQ(map.at({0, 1}), e.value12);
  }
  Coo int32 = readMatrixMarket(test::malformedPath("mangled_int32.mtx"));
  EXPECT_THROW(pack(int32, TensorFormat::csr(), ValueType::Int32), std::invalid_argument);
  EXPECT_EQ(pack(int32, TensorFormat::csr(), ValueType::Int64).valueAt({3, 0}), -2147483649.0);

  // Skew-symmetric: the lower triangle as written, the upper negated.
  Coo skew = readMatrixMarket(test::malformedPath("mangled_skew.mtx"));
  EXPECT_EQ(skew.nnz(), 20u);
  CoordinateMap map = toMap(skew);
  EXPECT_EQ(map.at({3, 0}), 12);
  EXPECT_EQ(map.at({0, 3}), -12);
  EXPECT_EQ(map.at({5, 4}), 18);
  EXPECT_EQ(map.at({4, 5}), -18);
}

TEST(MatrixMarketMalformed, OwnCasesNameTheLineAndTheProblem) {
  test::TempDir dir;
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  std::vector<ErrorCase> cases = {
      {"empty", "", 1, "empty file: expected a '%%MatrixMarket' header"},
      {"header_only", general, 1, "file ends before the size line"},
      {"header_short", "%%MatrixMarket matrix coordinate real\n3 3 0\n", 1,
       "header must read '%%MatrixMarket matrix <format> <field> <symmetry>'"},
      {"header_extra", "%%MatrixMarket matrix coordinate real general extra\n3 3 0\n", 1,
       "unexpected text 'extra' after the header"},
      {"size_not_number", general + "% c\nthree 3 1\n1 1 1\n", 3, "invalid row count 'three' in the size line"},
      {"size_negative", general + "-3 3 1\n1 1 1\n", 2, "row count -3 is outside 0..2147483647"},
      {"size_too_large", general + "3 3000000000 1\n1 1 1\n", 2, "column count 3000000000 is outside 0..2147483647"},
      {"size_extra", "%%MatrixMarket matrix array real general\n2 2 4\n1\n2\n3\n4\n", 2,
       "size line must hold 'rows columns', found extra text '4'"},
      {"count_exceeds_cells", general + "2 2 5\n1 1 1\n", 2, "entry count 5 exceeds the 4 cells of a 2x2 matrix"},
      {"too_few_entries", general + "3 3 3\n1 1 1\n2 2 2\n", 4, "file ends after 2 of 3 entries"},
      {"too_many_entries", general + "3 3 2\n1 1 1\n2 2 2\n3 3 3\n", 5, "more entries than the 2 declared in the size line"},
      {"index_zero", general + "3 3 2\n1 1 1\n0 2 2\n", 4, "row index 0 is outside 1..3 (Matrix Market indices are 1-based)"},
      {"row_out_of_range", general + "3 3 1\n4 1 1\n", 3, "row index 4 is outside 1..3"},
      {"column_out_of_range", general + "3 3 1\n1 -1 1\n", 3, "column index -1 is outside 1..3"},
      {"index_overflow", general + "3 3 1\n99999999999999999999 1 1\n", 3,
       "row index 99999999999999999999 is outside 1..3"},
      {"index_not_integer", general + "3 3 1\n1.5 1 1\n", 3, "expected an integer row index, found '1.5'"},
      {"value_not_number", general + "3 3 2\n1 1 1\n2 2 abc\n", 4, "non-numeric value 'abc'"},
      {"value_trailing_garbage", general + "3 3 1\n1 1 1.5x\n", 3, "non-numeric value '1.5x'"},
      {"value_overflow", general + "3 3 1\n1 1 1e999\n", 3, "value '1e999' is out of the range of float64"},
      {"extra_token", general + "3 3 1\n1 1 1.0 7\n", 3, "unexpected text '7' after the entry"},
      {"truncated_mid_line", general + "3 3 2\n1 1 1.0\n2", 4, "missing column index"},
      {"truncated_before_value", general + "3 3 2\n1 1 1.0\n2 2", 4, "missing value"},
      {"integer_with_fraction", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
       "expected an integer value, found '1.5'"},
      {"integer_beyond_2_53", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 9007199254740993\n", 3,
       "integer value '9007199254740993' is beyond 2^53 and cannot be held exactly"},
      {"complex_coordinate", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", 1,
       "complex matrices are not supported: tcc reads the real, integer and pattern fields"},
      {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 5\n", 4,
       "skew-symmetric matrix has a nonzero diagonal entry at (2, 2)"},
      {"skew_not_square", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 2 0\n", 2,
       "skew-symmetric matrix must be square, not 3x2"},
      {"pattern_with_value", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3,
       "unexpected text '1' after the entry"},
      {"array_too_few", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n", 6, "file ends after 4 of 6 entries"},
      {"array_too_many", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", 5,
       "more entries than the 2 declared in the size line"},
      {"array_non_numeric", "%%MatrixMarket matrix array real general\n1 2\n1\nnan?\n", 4, "non-numeric value 'nan?'"},
      {"array_huge_header", "%%MatrixMarket matrix array real symmetric\n2147483647 2147483647\n1\n", 3,
       "file ends after 1 of 2305843008139952128 entries"},
      {"coordinate_huge_count", general + "2147483647 2147483647 4000000000000000000\n1 1 1\n", 3,
       "file ends after 1 of 4000000000000000000 entries"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    expectFileError(dir.write(c.name + ".mtx", c.text), c.line, c.message);
  }
  EXPECT_GE(cases.size(), 20u);
}

TEST(MatrixMarketMalformed, MissingFileAndFolderAreErrors) {
  test::TempDir dir;
  EXPECT_THROW(readMatrixMarket(dir.file("absent.mtx")), FileError);
  try {
    readMatrixMarket(dir.path());
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.message(), "not a regular file");
    EXPECT_EQ(error.line(), 0);
  }
}

TEST(MatrixMarket, ExpansionAndLayouts) {
  test::TempDir dir;
  Coo symmetric = readMatrixMarket(dir.write("s.mtx",
      "%%MatrixMarket matrix coordinate real symmetric\n% lower triangle\n3 3 3\n1 1 2.5\n3 1 -1\n3 2 4e-3\n"));
  EXPECT_EQ(toMap(symmetric), (CoordinateMap{{{0, 0}, 2.5}, {{2, 0}, -1}, {{0, 2}, -1}, {{2, 1}, 4e-3}, {{1, 2}, 4e-3}}));
  Coo pattern = readMatrixMarket(dir.write("p.mtx",
      "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n"));
  EXPECT_EQ(toMap(pattern), (CoordinateMap{{{0, 0}, 1}, {{1, 0}, 1}, {{0, 1}, 1}}));
  Coo integer = readMatrixMarket(dir.write("i.mtx",
      "%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 -7\n2 1 +5\n"));
  EXPECT_EQ(toMap(integer), (CoordinateMap{{{0, 2}, -7}, {{1, 0}, 5}}));
  // Array files are column-major; zeros are not entries.
  Coo array = readMatrixMarket(dir.write("a.mtx",
      "%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n6\n"));
  EXPECT_EQ(array.dims, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(toMap(array), (CoordinateMap{{{0, 0}, 1}, {{1, 0}, 2}, {{1, 1}, 4}, {{0, 2}, 5}, {{1, 2}, 6}}));
  Coo arraySymmetric = readMatrixMarket(dir.write("as.mtx",
      "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n"));
  EXPECT_EQ(toDense(arraySymmetric), (std::vector<double>{1, 2, 3, 2, 4, 5, 3, 5, 6}));
  Coo arraySkew = readMatrixMarket(dir.write("ak.mtx",
      "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"));
  EXPECT_EQ(toDense(arraySkew), (std::vector<double>{0, -1, -2, 1, 0, -3, 2, 3, 0}));
  // Windows line endings, blank lines, upper-case header words, no final newline.
  Coo crlf = readMatrixMarket(dir.write("crlf.mtx",
      "%%MatrixMarket MATRIX Coordinate Real General\r\n%c\r\n\r\n2 2 2\r\n1 1 .5\r\n\r\n2 2 -1.25E+2"));
  EXPECT_EQ(toMap(crlf), (CoordinateMap{{{0, 0}, 0.5}, {{1, 1}, -125}}));
}

// An independent reader: iostreams, no validation beyond what the test needs.
CoordinateMap naiveRead(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  bool pattern = line.find("pattern") != std::string::npos;
  bool symmetric = line.find(" symmetric") != std::string::npos;
  while (std::getline(in, line) && line[0] == '%') {}
  std::istringstream size(line);
  int64_t rows, cols, entries;
  size >> rows >> cols >> entries;
  CoordinateMap map;
  for (int64_t k = 0; k < entries; ++k) {
    int32_t i, j;
    double value = 1;
    in >> i >> j;
    if (!pattern) in >> value;
    map[{i - 1, j - 1}] += value;
    if (symmetric && i != j) map[{j - 1, i - 1}] += value;
  }
  return map;
}

struct SharedMatrix {
  const char* name;
  int32_t rows, cols;
  size_t expandedNnz;  // from the data folder's SOURCES.md
};

const SharedMatrix kSharedMatrices[] = {
    {"494_bus.mtx", 494, 494, 1666}, {"Erdos971.mtx", 472, 472, 2628},
    {"Franz6_id1959_aug.mtx", 10592, 3016, 48472}, {"G51.mtx", 1000, 1000, 11818},
    {"LF10.mtx", 18, 18, 82}, {"Pd.mtx", 8081, 8081, 13036}, {"ash219.mtx", 219, 85, 438},
    {"bcspwr01.mtx", 39, 39, 131}, {"bcsstk01.mtx", 48, 48, 400}, {"bcsstk16.mtx", 4884, 4884, 290378},
    {"cage5.mtx", 37, 37, 233}, {"gent113.mtx", 113, 113, 655}, {"ibm32a.mtx", 32, 31, 123},
    {"ibm32b.mtx", 31, 32, 123}, {"karate.mtx", 34, 34, 156}, {"lp_e226.mtx", 223, 472, 2768},
    {"mbeacxc.mtx", 492, 490, 49920}, {"west0497.mtx", 497, 497, 1727}, {"dwt_992.mtx", 992, 992, 16744},
};

TEST(MatrixMarket, RealMatricesMatchTheirDocumentedShapesAndANaiveReader) {
  for (const SharedMatrix& m : kSharedMatrices) {
    SCOPED_TRACE(m.name);
    std::string path = test::matrixPath(m.name);
    Coo coo = readMatrixMarket(path);
    EXPECT_EQ(coo.dims, (std::vector<int32_t>{m.rows, m.cols}));
    EXPECT_EQ(coo.nnz(), m.expandedNnz);
    EXPECT_EQ(toMap(coo), naiveRead(path));
  }
  try {
    readMatrixMarket(test::matrixPath("young1c.mtx"));
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.line(), 1);
    EXPECT_NE(error.message().find("complex matrices are not supported"), std::string::npos);
  }
}

TEST(MatrixMarket, WriteThenReadGivesTheSameMatrix) {
  test::TempDir dir;
  for (const SharedMatrix& m : kSharedMatrices) {
    SCOPED_TRACE(m.name);
    Coo coo = readMatrixMarket(test::matrixPath(m.name));
    std::string path = dir.file(std::string("copy_") + m.name);
    writeMatrixMarket(path, coo);
    EXPECT_EQ(toMap(readMatrixMarket(path)), toMap(coo));
    // Stored zeros are structure: a CSC matrix writes every one of them.
    Tensor csc = pack(coo, TensorFormat::csc());
    writeMatrixMarket(path, csc);
    EXPECT_EQ(toMap(readMatrixMarket(path)), toMap(coo));
  }
  Coo small = readMatrixMarket(test::matrixPath("LF10.mtx"));
  writeMatrixMarket(dir.file("array.mtx"), small, MatrixMarketLayout::Array);
  EXPECT_EQ(toMap(readMatrixMarket(dir.file("array.mtx"))), test::withoutZeros(toMap(small)));
}

TEST(MatrixMarket, EveryElementTypeRoundTrips) {
  test::TempDir dir;
  for (ValueType type : test::allValueTypes()) {
    SCOPED_TRACE(toString(type));
    Coo coo = randomUniform({13, 17}, 0.2, 5);
    if (!isFloat(type)) for (double& value : coo.values) value = std::round(value * 1000);
    Tensor tensor = pack(coo, TensorFormat::dcsr(), type);
    for (MatrixMarketLayout layout : {MatrixMarketLayout::Coordinate, MatrixMarketLayout::Array}) {
      std::string path = dir.file("typed.mtx");
      writeMatrixMarket(path, tensor, layout);
      Tensor back = pack(readMatrixMarket(path), TensorFormat::csr(), type);
      CoordinateMap expected;
      for (const auto& [coordinate, value] : toMap(coo)) expected[coordinate] = test::roundTo(type, value);
      EXPECT_EQ(toMap(unpack(back)), expected);
      std::ifstream in(path);
      std::string header;
      std::getline(in, header);
      EXPECT_NE(header.find(isFloat(type) ? " real general" : " integer general"), std::string::npos) << header;
    }
  }
  // Int64 beyond 2^53 is written exactly.
  Tensor big({1, 2}, TensorFormat::dense(2), ValueType::Int64);
  big.values<int64_t>()[1] = (int64_t{1} << 62) + 3;
  writeMatrixMarket(dir.file("big.mtx"), big);
  std::ifstream in(dir.file("big.mtx"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("1 2 4611686018427387907\n"), std::string::npos) << text;
}

TEST(MatrixMarket, FailedWriteLeavesNoPartialFile) {
  test::TempDir dir;
  std::string path = dir.write("keep.mtx", "original");
  Coo order3 = randomUniform({2, 2, 2}, 0.5, 1);
  EXPECT_THROW(writeMatrixMarket(path, order3), std::invalid_argument);
  Coo outside = Coo::ofShape({2, 2});
  int32_t bad[2] = {5, 0};
  outside.push(bad, 1.0);
  EXPECT_THROW(writeMatrixMarket(path, outside), std::invalid_argument);
  EXPECT_THROW(writeMatrixMarket(dir.file("no/such/folder/x.mtx"), randomUniform({2, 2}, 0.5, 1)), FileError);
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "original");
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "keep.mtx");
  }
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace tcc::rt

namespace tcc::rt {
namespace {

// Text of a large symmetric matrix (over 16 MB), with its entries as a
// sorted list for comparison.
struct LargeText {
  std::string text;
  std::vector<std::tuple<int32_t, int32_t, double>> expanded;
};

LargeText largeSymmetricText(int64_t entries) {
  LargeText large;
  large.text = "%%MatrixMarket matrix coordinate real symmetric\n% large\n100000 100000 " +
               std::to_string(entries) + "\n";
  uint64_t state = 12345;
  for (int64_t k = 0; k < entries; ++k) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    int32_t row = static_cast<int32_t>((state >> 33) % 100000);
    int32_t col = static_cast<int32_t>((state >> 13) % 100000);
    if (col > row) std::swap(row, col);
    double value = static_cast<double>(state >> 40) * 0x1.0p-20 + 0.5;
    char line[96];
    int length = std::snprintf(line, sizeof line, "%d %d %.17g\n", row + 1, col + 1, value);
    large.text.append(line, length);
    large.expanded.emplace_back(row, col, value);
    if (row != col) large.expanded.emplace_back(col, row, value);
  }
  std::sort(large.expanded.begin(), large.expanded.end());
  return large;
}

std::vector<std::tuple<int32_t, int32_t, double>> sortedEntries(const Coo& coo) {
  std::vector<std::tuple<int32_t, int32_t, double>> entries;
  for (size_t k = 0; k < coo.nnz(); ++k) entries.emplace_back(coo.coords[0][k], coo.coords[1][k], coo.values[k]);
  std::sort(entries.begin(), entries.end());
  return entries;
}

TEST(MatrixMarketLarge, LargeTextReadsExactlyAndErrorsKeepTheirLine) {
  LargeText large = largeSymmetricText(700000);
  ASSERT_GT(large.text.size(), size_t{17} << 20);
  Coo coo = parseMatrixMarket(large.text, "large.mtx");
  EXPECT_EQ(sortedEntries(coo), large.expanded);

  // A bad value near the end: entry 699990 sits on line 3 + 699990.
  std::string broken = large.text;
  size_t lineStart = 0;
  for (int64_t line = 1; line < 3 + 699990; ++line) lineStart = broken.find('\n', lineStart) + 1;
  size_t valueStart = broken.rfind(' ', broken.find('\n', lineStart)) + 1;
  broken.replace(valueStart, 1, "x");
  try {
    parseMatrixMarket(broken, "large.mtx");
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.line(), 3 + 699990);
    EXPECT_EQ(error.message().substr(0, 17), "non-numeric value");
  }
  // One entry more than declared.
  try {
    parseMatrixMarket(large.text + "1 1 1\n", "large.mtx");
    FAIL();
  } catch (const FileError& error) {
    EXPECT_EQ(error.line(), 3 + 700000 + 1);
    EXPECT_EQ(error.message(), "more entries than the 700000 declared in the size line");
  }
}

}  // namespace
}  // namespace tcc::rt
