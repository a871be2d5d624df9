// SystemCompiler backend, load half: dlopen a shared library held in memory,
// through a temporary file that is removed as soon as it is mapped.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "binary.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TCC_JIT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TCC_JIT_SANITIZED 1
#endif

namespace tcc::jit {
namespace {

#ifdef TCC_JIT_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

class SharedLibraryModule final : public Module {
 public:
  explicit SharedLibraryModule(void* handle) : handle_(handle) {}
  ~SharedLibraryModule() override { dlclose(handle_); }

  void* findSymbol(std::string_view name) const override { return dlsym(handle_, std::string(name).c_str()); }
  Backend backend() const override { return Backend::SystemCompiler; }

 private:
  void* handle_;
};

// The library written to a fresh, uniquely named file, removed again once
// loaded. (A reused name such as /proc/self/fd/N would make dlopen hand back
// an earlier library of the same name.)
class TemporaryLibraryFile {
 public:
  explicit TemporaryLibraryFile(const std::string& bytes) {
    const char* base = std::getenv("TMPDIR");
    path_ = std::string(base && *base ? base : "/tmp") + "/tcc-kernel-XXXXXX.so";
    int descriptor = mkstemps(path_.data(), 3);
    if (descriptor < 0) throw CompileError("tcc::jit: cannot create " + path_ + ": " + std::strerror(errno));
    bool complete = true;
    for (size_t written = 0; written < bytes.size();) {
      ssize_t count = write(descriptor, bytes.data() + written, bytes.size() - written);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) {
        complete = false;
        break;
      }
      written += static_cast<size_t>(count);
    }
    close(descriptor);
    if (!complete) {
      unlink(path_.c_str());
      throw CompileError("tcc::jit: cannot write " + path_);
    }
  }
  ~TemporaryLibraryFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The OpenMP runtime a kernel pulled in keeps worker threads parked in its
// code; unloading it with the last kernel would leave them running in freed
// memory. Pin whichever runtime is loaded.
void pinOpenmpRuntime() {
  for (const char* name : {"libgomp.so.1", "libomp.so.5", "libomp.so"})
    if (void* runtime = dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(runtime);
}

}  // namespace

std::shared_ptr<const Module> loadSharedLibrary(const std::string& sharedLibraryBytes, bool openmp) {
  TemporaryLibraryFile file(sharedLibraryBytes);
  // RTLD_NOW: an unresolved external fails here, as it does for the JIT.
  // RTLD_DEEPBIND: the kernel's OpenMP calls bind to the runtime it was
  // linked with, not to another one the host exports under the same names
  // (libgomp's omp_get_thread_num in a libomp team answers 0 everywhere).
  // The sanitizers refuse RTLD_DEEPBIND (GCC says so with __SANITIZE_*__,
  // Clang 16 with __has_feature).
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (openmp && !kSanitized) flags |= RTLD_DEEPBIND;
  void* handle = dlopen(file.path().c_str(), flags);
  if (!handle) throw CompileError(std::string("tcc::jit: cannot load the compiled library: ") + dlerror());
  if (openmp) pinOpenmpRuntime();
  return std::make_shared<SharedLibraryModule>(handle);
}

}  // namespace tcc::jit
