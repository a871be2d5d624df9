#include "tcc/runtime/frostt.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "file_io.h"
#include "storage_walk.h"
#include "text_scanner.h"
#include "value_format.h"

namespace tcc::rt {

namespace {

using detail::ParseStatus;
using detail::quoted;
using detail::TextScanner;

// Tokens on the scanner's current line (which must not be empty).
int countTokens(TextScanner scanner) {
  int count = 0;
  while (!scanner.atLineEnd()) {
    scanner.takeToken();
    ++count;
  }
  return count;
}

[[noreturn]] void failFieldCount(const TextScanner& scanner, int order) {
  scanner.fail("expected " + std::to_string(order + 1) + " fields (" + std::to_string(order) +
               " coordinates and a value), found " + std::to_string(scanner.fieldsOnLine()));
}

}  // namespace

Coo parseTns(std::string_view text, const std::string& path, std::vector<int32_t> knownDims) {
  TextScanner scanner(text, path);
  if (!scanner.skipEmptyLines('#')) {
    if (!knownDims.empty()) return Coo::ofShape(std::move(knownDims));
    scanner.fail(text.empty() ? "empty file: a .tns file needs at least one entry to give its order"
                              : "no entries: a .tns file needs at least one entry to give its order");
  }
  int order = countTokens(scanner) - 1;
  if (order > TCC_MAX_ORDER) {
    scanner.fail("entry has " + std::to_string(order) + " coordinates; at most " +
                 std::to_string(TCC_MAX_ORDER) + " modes are supported");
  }
  if (!knownDims.empty() && static_cast<int>(knownDims.size()) != order) {
    scanner.fail("entry has " + std::to_string(order) + " coordinates but the tensor has order " +
                 std::to_string(knownDims.size()));
  }
  for (int32_t dim : knownDims) {
    if (dim < 0) throw std::invalid_argument("readTns: negative known dimension " + std::to_string(dim));
  }
  int32_t limit = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> largest(order, 0);
  Coo coo = Coo::ofShape(knownDims.empty() ? std::vector<int32_t>(order, 0) : knownDims);
  coo.reserve(static_cast<size_t>(text.size() / (2 * order + 2) + 1));
  int32_t coordinate[TCC_MAX_ORDER + 1] = {};
  do {
    for (int mode = 0; mode < order; ++mode) {
      int64_t index = 0;
      ParseStatus status = scanner.parseInteger(index);
      if (status != ParseStatus::Ok && scanner.fieldsOnLine() != order + 1) {
        failFieldCount(scanner, order);
      }
      if (status == ParseStatus::NotNumber) {
        scanner.fail("expected an integer coordinate for mode " + std::to_string(mode + 1) +
                     ", found " + quoted(scanner.peekToken()));
      }
      int32_t bound = knownDims.empty() ? limit : knownDims[mode];
      if (status == ParseStatus::OutOfRange || index < 1 || index > bound) {
        std::string shown = status == ParseStatus::OutOfRange ? std::string(scanner.peekToken())
                                                              : std::to_string(index);
        scanner.fail("coordinate " + shown + " of mode " + std::to_string(mode + 1) +
                     " is outside 1.." + std::to_string(bound) +
                     (index == 0 && status == ParseStatus::Ok ? " (.tns coordinates are 1-based)" : ""));
      }
      coordinate[mode] = static_cast<int32_t>(index - 1);
      largest[mode] = std::max(largest[mode], static_cast<int32_t>(index));
    }
    double value = 0;
    ParseStatus status = scanner.parseReal(value);
    if (status == ParseStatus::Missing) scanner.fail("missing value after the coordinates");
    if (status == ParseStatus::NotNumber) scanner.fail("non-numeric value " + quoted(scanner.peekToken()));
    if (status == ParseStatus::OutOfRange) {
      scanner.fail("value " + quoted(scanner.peekToken()) + " is out of the range of float64");
    }
    scanner.skipBlanks();
    if (!scanner.atLineEnd()) failFieldCount(scanner, order);
    if (order == 0 && coo.nnz() == 1) scanner.fail("a scalar .tns file holds exactly one value");
    coo.push(coordinate, value);
    scanner.nextLine();
  } while (scanner.skipEmptyLines('#'));
  if (knownDims.empty()) coo.dims = largest;
  return coo;
}

Coo readTns(const std::string& path, std::vector<int32_t> knownDims) {
  detail::MappedFile file(path);
  return parseTns(file.text(), path, std::move(knownDims));
}

void writeTns(const std::string& path, const Coo& coo) {
  int order = coo.order();
  if (coo.coords.size() != coo.dims.size()) {
    throw std::invalid_argument("cannot write " + path + ": Coo has mismatched coordinate arrays");
  }
  for (int mode = 0; mode < order; ++mode) {
    if (coo.coords[mode].size() != coo.values.size()) {
      throw std::invalid_argument("cannot write " + path + ": Coo arrays differ in length");
    }
    for (int32_t c : coo.coords[mode]) {
      if (c < 0 || c >= coo.dims[mode]) {
        throw std::invalid_argument("cannot write " + path + ": coordinate " + std::to_string(c) +
                                    " of mode " + std::to_string(mode) + " is outside the tensor");
      }
    }
  }
  if (order == 0 && coo.nnz() > 1) {
    throw std::invalid_argument("cannot write " + path + ": a scalar holds one value");
  }
  detail::AtomicFileWriter out(path);
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::string& buffer = out.buffer();
    for (int mode = 0; mode < order; ++mode) {
      detail::appendInteger(buffer, int64_t{coo.coords[mode][k]} + 1);
      buffer += ' ';
    }
    detail::appendReal(buffer, coo.values[k]);
    buffer += '\n';
    out.flushIfLarge();
  }
  out.commit();
}

void writeTns(const std::string& path, const Tensor& tensor) {
  int order = tensor.order();
  bool integer = !isFloat(tensor.valueType());
  detail::AtomicFileWriter out(path);
  bool zerosImplicit = detail::zerosAreImplicit(tensor);
  detail::forEachStoredPosition(tensor, [&](const int32_t* coord, int64_t position) {
    if (zerosImplicit && tensor.valueAtPosition(position) == 0) return;
    std::string& buffer = out.buffer();
    for (int mode = 0; mode < order; ++mode) {
      detail::appendInteger(buffer, int64_t{coord[mode]} + 1);
      buffer += ' ';
    }
    if (integer) detail::appendInteger(buffer, tensor.int64ValueAtPosition(position));
    else detail::appendValue(buffer, tensor.valueAtPosition(position), tensor.valueType());
    buffer += '\n';
    out.flushIfLarge();
  });
  out.commit();
}

}  // namespace tcc::rt
