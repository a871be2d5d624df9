#include "disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

namespace tcc::jit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormatTag = "tcc-kernel-cache 1\n";

// "<length>\n<bytes>", read back by takeField.
void appendField(std::string& out, std::string_view bytes) {
  out += std::to_string(bytes.size());
  out += '\n';
  out += bytes;
}

bool takeField(std::string_view& in, std::string_view& field) {
  size_t newline = in.find('\n');
  if (newline == std::string_view::npos || newline == 0 || newline > 20) return false;
  size_t length = 0;
  for (char c : in.substr(0, newline)) {
    if (c < '0' || c > '9') return false;
    length = length * 10 + static_cast<size_t>(c - '0');
  }
  in.remove_prefix(newline + 1);
  if (length > in.size()) return false;
  field = in.substr(0, length);
  in.remove_prefix(length);
  return true;
}

}  // namespace

std::optional<Binary> readCacheEntry(const fs::path& file, const std::string& keyText, Backend backend) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string contents{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::string_view rest = contents;
  std::string_view backendField, keyField, code;
  if (!rest.starts_with(kFormatTag)) throw std::runtime_error(file.string() + ": not a tcc kernel cache entry");
  rest.remove_prefix(kFormatTag.size());
  if (!takeField(rest, backendField) || !takeField(rest, keyField) || !takeField(rest, code) || !rest.empty())
    throw std::runtime_error(file.string() + ": truncated or damaged kernel cache entry");
  if (backendField != backendName(backend) || keyField != keyText)
    throw std::runtime_error(file.string() + ": kernel cache entry of another key (hash collision)");
  return Binary{backend, std::string(code)};
}

void writeCacheEntry(const fs::path& file, const std::string& keyText, const Binary& binary) {
  std::string contents(kFormatTag);
  appendField(contents, backendName(binary.backend));
  appendField(contents, keyText);
  appendField(contents, binary.bytes);

  static std::atomic<unsigned> counter{0};
  fs::create_directories(file.parent_path());
  fs::path temporary = file;
  temporary += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out.flush()) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  std::error_code error;
  fs::rename(temporary, file, error);
  if (error) {
    fs::remove(temporary, error);
    throw std::runtime_error("cannot rename a kernel cache entry into " + file.string());
  }
}

}  // namespace tcc::jit
