#include "tcc/jit/kernel_cache.h"

#include <cstdlib>
#include <exception>

#include "binary.h"
#include "digest.h"
#include "disk_cache.h"

#ifndef TCC_VERSION_STRING
#define TCC_VERSION_STRING "unknown"
#endif

namespace tcc::jit {
namespace {

namespace fs = std::filesystem;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

void appendField(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += ' ';
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

// Everything that decides the compiled code, spelled out unambiguously.
std::string keyText(const std::string& source, const CompileOptions& options, std::string_view callerKey) {
  std::string text;
  appendField(text, "tcc", TCC_VERSION_STRING);
  appendField(text, "backend", backendName(options.backend));
  appendField(text, "toolchain", toolchainIdentity(options));
  appendField(text, "opt", std::to_string(options.optLevel));
  appendField(text, "openmp", options.openmp ? "1" : "0");
  for (const std::string& flag : options.extraFlags) appendField(text, "flag", flag);
  appendField(text, "caller", callerKey);
  appendField(text, "source", source);
  return text;
}

}  // namespace

KernelCacheSettings KernelCacheSettings::fromEnvironment() {
  KernelCacheSettings settings;
  const std::string disabled = environment("TCC_NO_DISK_CACHE");
  if (!disabled.empty() && disabled != "0") return settings;
  if (std::string directory = environment("TCC_CACHE_DIR"); !directory.empty()) {
    settings.diskDirectory = fs::path(directory);
  } else if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute()) {
    settings.diskDirectory = fs::path(xdg) / "tcc";
  } else if (std::string home = environment("HOME"); !home.empty()) {
    settings.diskDirectory = fs::path(home) / ".cache" / "tcc";
  }
  return settings;
}

KernelCache::KernelCache(KernelCacheSettings settings) : settings_(std::move(settings)) {}

KernelCache& KernelCache::shared() {
  static KernelCache* cache = new KernelCache();
  return *cache;
}

std::string KernelCache::keyDigest(const std::string& source, const CompileOptions& options,
                                   std::string_view callerKey) const {
  return fnv1a128Hex(keyText(source, options, callerKey));
}

std::shared_ptr<const Module> KernelCache::getOrCompile(const std::string& source, const CompileOptions& options,
                                                        std::string_view callerKey) {
  const std::string key = keyText(source, options, callerKey);
  std::promise<std::shared_ptr<const Module>> promise;
  std::shared_ptr<Entry> existing, ours;
  {
    std::lock_guard lock(mutex_);
    if (auto found = modules_.find(key); found != modules_.end()) {
      ++statistics_.memoryHits;
      existing = found->second;
    } else {
      ours = std::make_shared<Entry>(Entry{promise.get_future().share()});
      modules_.emplace(key, ours);
    }
  }
  // Another thread has this key (or is compiling it): wait for its result.
  if (existing) return existing->module.get();

  try {
    auto module = loadOrCompile(key, fnv1a128Hex(key), source, options);
    promise.set_value(module);
    return module;
  } catch (...) {
    // Waiting threads get the error too; later calls try again.
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    if (auto found = modules_.find(key); found != modules_.end() && found->second == ours) modules_.erase(found);
    throw;
  }
}

std::shared_ptr<const Module> KernelCache::loadOrCompile(const std::string& key, const std::string& digest,
                                                         const std::string& source, const CompileOptions& options) {
  std::optional<fs::path> file;
  if (settings_.diskDirectory) file = *settings_.diskDirectory / (digest + ".kernel");

  if (file) {
    try {
      if (std::optional<Binary> stored = readCacheEntry(*file, key, options.backend)) {
        auto module = loadBinary(*stored, options);
        std::lock_guard lock(mutex_);
        ++statistics_.diskHits;
        return module;
      }
    } catch (const std::exception&) {
      // A damaged entry or one that no longer loads: compile and replace it.
      std::lock_guard lock(mutex_);
      ++statistics_.diskErrors;
    }
  }

  Binary binary = buildBinary(source, options);
  {
    std::lock_guard lock(mutex_);
    ++statistics_.compiles;
  }
  auto module = loadBinary(binary, options);
  if (file) {
    bool written = true;
    try {
      writeCacheEntry(*file, key, binary);
    } catch (const std::exception&) {
      written = false;  // the cache is an optimization: the module is still good
    }
    std::lock_guard lock(mutex_);
    ++(written ? statistics_.diskWrites : statistics_.diskErrors);
  }
  return module;
}

void KernelCache::clearMemory() {
  std::lock_guard lock(mutex_);
  modules_.clear();
}

KernelCacheStatistics KernelCache::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

}  // namespace tcc::jit
