#include "file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tcc/runtime/errors.h"

namespace tcc::rt::detail {

std::string readWholeFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw FileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  }
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file);
    throw FileError(path, 0, "not a regular file");
  }
  std::string text;
  text.resize(static_cast<size_t>(info.st_size));
  size_t filled = 0;
  while (filled < text.size()) {
    size_t got = std::fread(text.data() + filled, 1, text.size() - filled, file);
    if (got == 0) break;
    filled += got;
  }
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw FileError(path, 0, "read error");
  text.resize(filled);  // the file may have shrunk while reading
  return text;
}

MappedFile::MappedFile(const std::string& path) {
  int descriptor = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    throw FileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  }
  struct stat info;
  if (fstat(descriptor, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(descriptor);
    throw FileError(path, 0, "not a regular file");
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size > 0) {
    void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, descriptor, 0);
    if (mapping != MAP_FAILED) {
      madvise(mapping, size, MADV_SEQUENTIAL);
      mapping_ = mapping;
      mappedSize_ = size;
      text_ = std::string_view(static_cast<const char*>(mapping), size);
    }
  }
  close(descriptor);
  if (mapping_ == nullptr && size > 0) {
    fallback_ = readWholeFile(path);
    text_ = fallback_;
  }
}

MappedFile::~MappedFile() {
  if (mapping_ != nullptr) munmap(mapping_, mappedSize_);
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  temporaryPath_ = path_ + ".tmp-XXXXXX";
  int descriptor = mkstemp(temporaryPath_.data());
  if (descriptor < 0) {
    throw FileError(path_, 0, std::string("cannot create output file: ") + std::strerror(errno));
  }
  file_ = fdopen(descriptor, "wb");
  if (file_ == nullptr) {
    int error = errno;
    close(descriptor);
    unlink(temporaryPath_.c_str());
    throw FileError(path_, 0, std::string("cannot open output file: ") + std::strerror(error));
  }
  buffer_.reserve(kBlockSize + 4096);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) unlink(temporaryPath_.c_str());
}

void AtomicFileWriter::write(std::string_view text) {
  buffer_.append(text);
  flushIfLarge();
}

void AtomicFileWriter::flush() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    fail(std::string("write failed: ") + std::strerror(errno));
  }
  buffer_.clear();
}

void AtomicFileWriter::fail(const std::string& what) {
  std::fclose(file_);
  file_ = nullptr;
  unlink(temporaryPath_.c_str());
  committed_ = true;  // nothing left to remove
  throw FileError(path_, 0, what);
}

void AtomicFileWriter::commit() {
  flush();
  if (std::fflush(file_) != 0) fail(std::string("write failed: ") + std::strerror(errno));
  // mkstemp creates files readable only by the owner; give the usual mode.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fileno(file_), 0666 & ~mask);
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) {
    unlink(temporaryPath_.c_str());
    committed_ = true;
    throw FileError(path_, 0, std::string("write failed: ") + std::strerror(errno));
  }
  if (std::rename(temporaryPath_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    unlink(temporaryPath_.c_str());
    committed_ = true;
    throw FileError(path_, 0, std::string("cannot rename output into place: ") + std::strerror(error));
  }
  committed_ = true;
}

}  // namespace tcc::rt::detail
