// A cache of compiled kernels, in memory and on disk.
//
// An entry is keyed by a hash of the source text, the compile options, the
// toolchain (compiler, LLVM version, host CPU and features), the tcc version
// and a caller's key string (fold in whatever else changes the code, e.g.
// formats, schedule, target, if it is not already in the source).
//
// On disk each entry is one file holding the full key and the compiled code:
// an ELF object for ClangInterpreter (a hit skips clang entirely and only
// links the object, a few milliseconds instead of tens), a shared library for
// SystemCompiler. The folder is $TCC_CACHE_DIR, else $XDG_CACHE_HOME/tcc,
// else ~/.cache/tcc; TCC_NO_DISK_CACHE=1 turns the disk cache off.
//
// Safe under concurrent use: within a process each key is compiled once (a
// thread that asks for a key being compiled waits for that compile); across
// processes files are written under a unique name and renamed into place,
// and a file that is unreadable or belongs to another key counts as a miss.
#ifndef TCC_JIT_KERNEL_CACHE_H
#define TCC_JIT_KERNEL_CACHE_H

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "tcc/jit/jit.h"

namespace tcc::jit {

struct KernelCacheSettings {
  // Where entries are stored; nullopt keeps the cache in memory only.
  std::optional<std::filesystem::path> diskDirectory;

  // From TCC_NO_DISK_CACHE, TCC_CACHE_DIR, XDG_CACHE_HOME and HOME.
  static KernelCacheSettings fromEnvironment();
};

struct KernelCacheStatistics {
  std::uint64_t memoryHits = 0;
  std::uint64_t diskHits = 0;
  std::uint64_t compiles = 0;
  std::uint64_t diskWrites = 0;
  std::uint64_t diskErrors = 0;  // unreadable or unwritable entries (the cache then compiles)
};

class KernelCache {
 public:
  explicit KernelCache(KernelCacheSettings settings = KernelCacheSettings::fromEnvironment());
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The compiled module for this source and options: from memory, from disk,
  // or compiled now (and then stored in both). Throws CompileError.
  std::shared_ptr<const Module> getOrCompile(const std::string& source, const CompileOptions& options = {},
                                             std::string_view callerKey = {});

  // The hex digest naming the entry for these arguments (also its file name).
  std::string keyDigest(const std::string& source, const CompileOptions& options = {},
                        std::string_view callerKey = {}) const;

  // Forgets the modules held in memory (modules still referenced elsewhere
  // stay loaded); the disk cache is untouched.
  void clearMemory();

  KernelCacheStatistics statistics() const;
  const KernelCacheSettings& settings() const { return settings_; }

  // The process-wide cache, configured from the environment on first use.
  // It is never destroyed, so its modules stay loaded until the process
  // ends (no teardown racing LLVM's own static objects at exit).
  static KernelCache& shared();

 private:
  std::shared_ptr<const Module> loadOrCompile(const std::string& keyText, const std::string& digest,
                                              const std::string& source, const CompileOptions& options);

  KernelCacheSettings settings_;
  mutable std::mutex mutex_;
  struct Entry {
    std::shared_future<std::shared_ptr<const Module>> module;
  };
  std::map<std::string, std::shared_ptr<Entry>> modules_;  // by full key text
  KernelCacheStatistics statistics_;
};

}  // namespace tcc::jit

#endif  // TCC_JIT_KERNEL_CACHE_H
