#include "tcc/runtime/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "file_io.h"
#include "storage_walk.h"
#include "tcc/runtime/pack.h"
#include "text_scanner.h"
#include "value_format.h"

namespace tcc::rt {

namespace {

using detail::ParseStatus;
using detail::quoted;
using detail::TextScanner;

enum class Layout { Coordinate, Array };
enum class Field { Real, Integer, Pattern };
enum class Symmetry { General, Symmetric, SkewSymmetric };

struct Header {
  Layout layout = Layout::Coordinate;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
};

std::string lowercase(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

Header parseHeader(TextScanner& scanner) {
  if (scanner.atEnd()) scanner.fail("empty file: expected a '%%MatrixMarket' header");
  std::string_view banner = scanner.takeToken();
  if (lowercase(banner) != "%%matrixmarket") {
    scanner.fail("missing '%%MatrixMarket' header on the first line");
  }
  std::string tokens[4];
  for (std::string& token : tokens) {
    if (scanner.atLineEnd()) {
      scanner.fail("header must read '%%MatrixMarket matrix <format> <field> <symmetry>'");
    }
    token = lowercase(scanner.takeToken());
  }
  if (!scanner.atLineEnd()) {
    scanner.fail("unexpected text " + quoted(scanner.restOfLine()) + " after the header");
  }
  Header header;
  if (tokens[0] != "matrix") {
    scanner.fail("unsupported object " + quoted(tokens[0]) + ": expected 'matrix'");
  }
  if (tokens[1] == "coordinate") {
    header.layout = Layout::Coordinate;
  } else if (tokens[1] == "array") {
    header.layout = Layout::Array;
  } else {
    scanner.fail("unknown format " + quoted(tokens[1]) + ": expected 'coordinate' or 'array'");
  }
  if (tokens[2] == "real" || tokens[2] == "double") {
    header.field = Field::Real;
  } else if (tokens[2] == "integer") {
    header.field = Field::Integer;
  } else if (tokens[2] == "pattern") {
    header.field = Field::Pattern;
  } else if (tokens[2] == "complex") {
    scanner.fail("complex matrices are not supported: tcc reads the real, integer and pattern fields");
  } else {
    scanner.fail("unknown field " + quoted(tokens[2]) + ": expected 'real', 'integer' or 'pattern'");
  }
  if (tokens[3] == "general") {
    header.symmetry = Symmetry::General;
  } else if (tokens[3] == "symmetric") {
    header.symmetry = Symmetry::Symmetric;
  } else if (tokens[3] == "skew-symmetric") {
    header.symmetry = Symmetry::SkewSymmetric;
  } else if (tokens[3] == "hermitian") {
    scanner.fail("hermitian symmetry applies only to complex matrices");
  } else {
    scanner.fail("unknown symmetry " + quoted(tokens[3]) +
                 ": expected 'general', 'symmetric' or 'skew-symmetric'");
  }
  if (header.layout == Layout::Array && header.field == Field::Pattern) {
    scanner.fail("the 'array' format cannot have the 'pattern' field");
  }
  if (header.symmetry == Symmetry::SkewSymmetric && header.field == Field::Pattern) {
    scanner.fail("a 'pattern' matrix cannot be 'skew-symmetric'");
  }
  scanner.nextLine();
  return header;
}

int32_t parseDimension(TextScanner& scanner, const char* what, const char* expected) {
  int64_t value = 0;
  ParseStatus status = scanner.parseInteger(value);
  if (status == ParseStatus::Missing) scanner.fail(std::string("size line must hold ") + expected);
  if (status != ParseStatus::Ok) {
    scanner.fail(std::string("invalid ") + what + " " + quoted(scanner.peekToken()) +
                 " in the size line");
  }
  if (value < 0 || value > std::numeric_limits<int32_t>::max()) {
    scanner.fail(std::string(what) + " " + std::to_string(value) + " is outside 0.." +
                 std::to_string(std::numeric_limits<int32_t>::max()));
  }
  return static_cast<int32_t>(value);
}

int32_t parseIndex(TextScanner& scanner, const char* what, int32_t limit) {
  int64_t value = 0;
  ParseStatus status = ParseStatus::Ok;
  if (scanner.parseDigits(value)) {
    if (value >= 1 && value <= limit) return static_cast<int32_t>(value - 1);
  } else {
    status = scanner.parseInteger(value);
  }
  if (status == ParseStatus::Missing) scanner.fail(std::string("missing ") + what + " index");
  if (status == ParseStatus::NotNumber) {
    scanner.fail(std::string("expected an integer ") + what + " index, found " +
                 quoted(scanner.peekToken()));
  }
  if (status == ParseStatus::OutOfRange || value < 1 || value > limit) {
    std::string shown = status == ParseStatus::OutOfRange ? std::string(scanner.peekToken())
                                                          : std::to_string(value);
    scanner.fail(std::string(what) + " index " + shown + " is outside 1.." + std::to_string(limit) +
                 (value == 0 && status == ParseStatus::Ok ? " (Matrix Market indices are 1-based)" : ""));
  }
  return static_cast<int32_t>(value - 1);
}

constexpr int64_t kLargestExactInteger = int64_t{1} << 53;

double parseValue(TextScanner& scanner, Field field) {
  if (field == Field::Pattern) return 1.0;
  if (field == Field::Integer) {
    int64_t value = 0;
    ParseStatus status = scanner.parseInteger(value);
    if (status == ParseStatus::Missing) scanner.fail("missing value");
    if (status == ParseStatus::NotNumber) {
      scanner.fail("expected an integer value, found " + quoted(scanner.peekToken()));
    }
    if (status == ParseStatus::OutOfRange || value > kLargestExactInteger ||
        value < -kLargestExactInteger) {
      std::string shown = status == ParseStatus::OutOfRange ? std::string(scanner.peekToken())
                                                            : std::to_string(value);
      scanner.fail("integer value " + quoted(shown) + " is beyond 2^53 and cannot be held exactly");
    }
    return static_cast<double>(value);
  }
  double value = 0;
  ParseStatus status = scanner.parseReal(value);
  if (status == ParseStatus::Missing) scanner.fail("missing value");
  if (status == ParseStatus::NotNumber) scanner.fail("non-numeric value " + quoted(scanner.peekToken()));
  if (status == ParseStatus::OutOfRange) {
    scanner.fail("value " + quoted(scanner.peekToken()) + " is out of the range of float64");
  }
  return value;
}

void expectLineEnd(TextScanner& scanner) {
  scanner.skipBlanks();
  if (!scanner.atLineEnd()) {
    scanner.fail("unexpected text " + quoted(scanner.restOfLine()) + " after the entry");
  }
  scanner.nextLine();
}

void expectNoMoreEntries(TextScanner& scanner, int64_t declared) {
  if (scanner.skipEmptyLines('%')) {
    scanner.fail("more entries than the " + std::to_string(declared) +
                 " declared in the size line");
  }
}

[[noreturn]] void failTruncated(TextScanner& scanner, int64_t found, int64_t declared) {
  scanner.failAtLine(scanner.lastLine(), "file ends after " + std::to_string(found) + " of " +
                                         std::to_string(declared) + " entries");
}

// Parses the entry at the scanner (on its first token) and appends it,
// with its mirror image for symmetric and skew-symmetric matrices.
inline void readCoordinateEntry(TextScanner& scanner, const Header& header, Coo& coo) {
  int32_t row = parseIndex(scanner, "row", coo.dims[0]);
  int32_t col = parseIndex(scanner, "column", coo.dims[1]);
  double value = parseValue(scanner, header.field);
  expectLineEnd(scanner);
  if (header.symmetry == Symmetry::SkewSymmetric && row == col) {
    if (value != 0) {
      scanner.failAtLine(scanner.line() - 1,
                         "skew-symmetric matrix has a nonzero diagonal entry at (" +
                             std::to_string(row + 1) + ", " + std::to_string(col + 1) + ")");
    }
    return;
  }
  coo.coords[0].push_back(row);
  coo.coords[1].push_back(col);
  coo.values.push_back(value);
  if (header.symmetry != Symmetry::General && row != col) {
    coo.coords[0].push_back(col);
    coo.coords[1].push_back(row);
    coo.values.push_back(header.symmetry == Symmetry::SkewSymmetric ? -value : value);
  }
}

// Never trust the size line for memory: each entry takes at least 4 bytes.
size_t entriesToReserve(const Header& header, int64_t declared, size_t textSize) {
  int64_t expected = std::min<int64_t>(declared, static_cast<int64_t>(textSize / 4) + 1);
  if (header.symmetry != Symmetry::General) expected *= 2;
  return static_cast<size_t>(expected);
}

void readCoordinateEntries(TextScanner& scanner, const Header& header, int64_t declared, Coo& coo,
                           size_t textSize) {
  coo.reserve(entriesToReserve(header, declared, textSize));
  for (int64_t k = 0; k < declared; ++k) {
    if (!scanner.skipEmptyLines('%')) failTruncated(scanner, k, declared);
    readCoordinateEntry(scanner, header, coo);
  }
  expectNoMoreEntries(scanner, declared);
}

void readArrayEntries(TextScanner& scanner, const Header& header, Coo& coo) {
  int32_t rows = coo.dims[0], cols = coo.dims[1];
  // Symmetric layouts are square (checked with the size line).
  int64_t n = rows;
  int64_t declared = header.symmetry == Symmetry::General     ? int64_t{rows} * cols
                     : header.symmetry == Symmetry::Symmetric ? n * (n + 1) / 2
                                                              : n * (n - 1) / 2;
  int64_t found = 0;
  for (int32_t col = 0; col < cols; ++col) {
    int32_t first = header.symmetry == Symmetry::General ? 0
                    : header.symmetry == Symmetry::Symmetric ? col
                                                              : col + 1;
    for (int32_t row = first; row < rows; ++row) {
      if (!scanner.skipEmptyLines('%')) failTruncated(scanner, found, declared);
      double value = parseValue(scanner, header.field);
      scanner.skipBlanks();
      if (!scanner.atLineEnd()) {
        scanner.fail("unexpected text " + quoted(scanner.restOfLine()) +
                     " after the value (array files hold one value per line)");
      }
      scanner.nextLine();
      ++found;
      if (value == 0) continue;
      int32_t coordinate[2] = {row, col};
      coo.push(coordinate, value);
      if (header.symmetry != Symmetry::General && row != col) {
        int32_t mirrored[2] = {col, row};
        coo.push(mirrored, header.symmetry == Symmetry::SkewSymmetric ? -value : value);
      }
    }
  }
  expectNoMoreEntries(scanner, declared);
}

}  // namespace

Coo parseMatrixMarket(std::string_view text, const std::string& path) {
  TextScanner scanner(text, path);
  Header header = parseHeader(scanner);
  if (!scanner.skipEmptyLines('%')) scanner.failAtLine(scanner.lastLine(), "file ends before the size line");
  const char* expected = header.layout == Layout::Coordinate ? "'rows columns entries'"
                                                              : "'rows columns'";
  int32_t rows = parseDimension(scanner, "row count", expected);
  int32_t cols = parseDimension(scanner, "column count", expected);
  int64_t declared = 0;
  if (header.layout == Layout::Coordinate) {
    ParseStatus status = scanner.parseInteger(declared);
    if (status == ParseStatus::Missing) scanner.fail(std::string("size line must hold ") + expected);
    if (status != ParseStatus::Ok || declared < 0) {
      scanner.fail("invalid entry count " + quoted(scanner.peekToken()) + " in the size line");
    }
  }
  scanner.skipBlanks();
  if (!scanner.atLineEnd()) {
    scanner.fail("size line must hold " + std::string(expected) + ", found extra text " +
                 quoted(scanner.restOfLine()));
  }
  if (header.symmetry != Symmetry::General && rows != cols) {
    scanner.fail(std::string(header.symmetry == Symmetry::Symmetric ? "symmetric" : "skew-symmetric") +
                 " matrix must be square, not " + std::to_string(rows) + "x" + std::to_string(cols));
  }
  if (header.layout == Layout::Coordinate && declared > int64_t{rows} * int64_t{cols}) {
    scanner.fail("entry count " + std::to_string(declared) + " exceeds the " +
                 std::to_string(int64_t{rows} * int64_t{cols}) + " cells of a " +
                 std::to_string(rows) + "x" + std::to_string(cols) + " matrix");
  }
  scanner.nextLine();
  Coo coo = Coo::ofShape({rows, cols});
  if (header.layout == Layout::Coordinate) {
    readCoordinateEntries(scanner, header, declared, coo, text.size());
  } else {
    readArrayEntries(scanner, header, coo);
  }
  return coo;
}

Coo readMatrixMarket(const std::string& path) {
  detail::MappedFile file(path);
  return parseMatrixMarket(file.text(), path);
}

namespace {

void writeHeader(detail::AtomicFileWriter& out, MatrixMarketLayout layout, bool integer) {
  out.write("%%MatrixMarket matrix ");
  out.write(layout == MatrixMarketLayout::Coordinate ? "coordinate " : "array ");
  out.write(integer ? "integer general\n" : "real general\n");
}

void requireMatrix(const std::string& path, int order) {
  if (order != 2) {
    throw std::invalid_argument("cannot write " + path + ": Matrix Market holds matrices, not order-" +
                                std::to_string(order) + " tensors (use .tns)");
  }
}

}  // namespace

void writeMatrixMarket(const std::string& path, const Coo& coo, MatrixMarketLayout layout) {
  requireMatrix(path, coo.order());
  if (layout == MatrixMarketLayout::Array) {
    std::vector<double> dense = toDense(coo);
    detail::AtomicFileWriter out(path);
    writeHeader(out, layout, false);
    int32_t rows = coo.dims[0], cols = coo.dims[1];
    out.write(std::to_string(rows) + " " + std::to_string(cols) + "\n");
    for (int32_t col = 0; col < cols; ++col) {
      for (int32_t row = 0; row < rows; ++row) {
        detail::appendReal(out.buffer(), dense[int64_t{row} * cols + col]);
        out.buffer() += '\n';
        out.flushIfLarge();
      }
    }
    out.commit();
    return;
  }
  for (int mode = 0; mode < 2; ++mode) {
    if (coo.coords[mode].size() != coo.values.size()) {
      throw std::invalid_argument("cannot write " + path + ": Coo arrays differ in length");
    }
    for (int32_t c : coo.coords[mode]) {
      if (c < 0 || c >= coo.dims[mode]) {
        throw std::invalid_argument("cannot write " + path + ": coordinate " + std::to_string(c) +
                                    " of mode " + std::to_string(mode) + " is outside the matrix");
      }
    }
  }
  detail::AtomicFileWriter out(path);
  writeHeader(out, layout, false);
  out.write(std::to_string(coo.dims[0]) + " " + std::to_string(coo.dims[1]) + " " +
            std::to_string(coo.nnz()) + "\n");
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::string& buffer = out.buffer();
    detail::appendInteger(buffer, int64_t{coo.coords[0][k]} + 1);
    buffer += ' ';
    detail::appendInteger(buffer, int64_t{coo.coords[1][k]} + 1);
    buffer += ' ';
    detail::appendReal(buffer, coo.values[k]);
    buffer += '\n';
    out.flushIfLarge();
  }
  out.commit();
}

void writeMatrixMarket(const std::string& path, const Tensor& tensor, MatrixMarketLayout layout) {
  requireMatrix(path, tensor.order());
  bool integer = !isFloat(tensor.valueType());
  int32_t rows = tensor.dims()[0], cols = tensor.dims()[1];
  if (layout == MatrixMarketLayout::Array) {
    // Column-major positions of every stored value, summed where repeated.
    size_t cells = static_cast<size_t>(int64_t{rows} * cols);
    std::vector<double> dense(integer ? 0 : cells, 0.0);
    std::vector<int64_t> denseIntegers(integer ? cells : 0, 0);
    detail::forEachStoredPosition(tensor, [&](const int32_t* coord, int64_t position) {
      int64_t index = int64_t{coord[1]} * rows + coord[0];
      if (integer) denseIntegers[index] += tensor.int64ValueAtPosition(position);
      else dense[index] += tensor.valueAtPosition(position);
    });
    detail::AtomicFileWriter out(path);
    writeHeader(out, layout, integer);
    out.write(std::to_string(rows) + " " + std::to_string(cols) + "\n");
    for (size_t index = 0; index < cells; ++index) {
      if (integer) detail::appendInteger(out.buffer(), denseIntegers[index]);
      else detail::appendValue(out.buffer(), dense[index], tensor.valueType());
      out.buffer() += '\n';
      out.flushIfLarge();
    }
    out.commit();
    return;
  }
  std::string body;
  int64_t count = 0;
  bool zerosImplicit = detail::zerosAreImplicit(tensor);
  detail::forEachStoredPosition(tensor, [&](const int32_t* coord, int64_t position) {
    if (zerosImplicit && tensor.valueAtPosition(position) == 0) return;
    detail::appendInteger(body, int64_t{coord[0]} + 1);
    body += ' ';
    detail::appendInteger(body, int64_t{coord[1]} + 1);
    body += ' ';
    if (integer) detail::appendInteger(body, tensor.int64ValueAtPosition(position));
    else detail::appendValue(body, tensor.valueAtPosition(position), tensor.valueType());
    body += '\n';
    ++count;
  });
  detail::AtomicFileWriter out(path);
  writeHeader(out, layout, integer);
  out.write(std::to_string(rows) + " " + std::to_string(cols) + " " + std::to_string(count) + "\n");
  out.write(body);
  out.commit();
}

}  // namespace tcc::rt
