// Internal: one cache entry per file. A file holds a format tag, the full key
// text and the compiled bytes; it is written under a unique temporary name
// and renamed into place, so readers in other processes see either no file
// or a complete one.
#ifndef TCC_JIT_SRC_DISK_CACHE_H
#define TCC_JIT_SRC_DISK_CACHE_H

#include <filesystem>
#include <optional>
#include <string>

#include "binary.h"

namespace tcc::jit {

// The entry's code if `file` holds a complete entry for exactly `keyText`
// and `backend`; nullopt if there is no such file. Throws std::runtime_error
// for a file that exists but is damaged or holds another key.
std::optional<Binary> readCacheEntry(const std::filesystem::path& file, const std::string& keyText, Backend backend);

// Throws std::runtime_error if the entry cannot be written.
void writeCacheEntry(const std::filesystem::path& file, const std::string& keyText, const Binary& binary);

}  // namespace tcc::jit

#endif  // TCC_JIT_SRC_DISK_CACHE_H
