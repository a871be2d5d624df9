// Reading a whole file into memory and writing one atomically (a temporary
// file in the same folder, renamed over the target when complete).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tcc::rt::detail {

// Throws FileError when the file cannot be opened or read.
std::string readWholeFile(const std::string& path);

// A whole file mapped read-only into memory (no copy); falls back to
// reading it when it cannot be mapped. Throws FileError.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view text() const { return text_; }

 private:
  void* mapping_ = nullptr;
  size_t mappedSize_ = 0;
  std::string fallback_;
  std::string_view text_;
};

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);  // throws FileError
  ~AtomicFileWriter();                           // removes the temporary unless committed
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Buffers text and writes it out in large blocks.
  void write(std::string_view text);
  std::string& buffer() { return buffer_; }
  void flushIfLarge() {
    if (buffer_.size() >= kBlockSize) flush();
  }
  // Flushes, closes and renames over the target; throws FileError.
  void commit();

 private:
  static constexpr size_t kBlockSize = 1 << 22;
  void flush();
  [[noreturn]] void fail(const std::string& what);

  std::string path_;
  std::string temporaryPath_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool committed_ = false;
};

}  // namespace tcc::rt::detail
