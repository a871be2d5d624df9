#include "tcc/jit/jit.h"

#include "binary.h"

namespace tcc::jit {

const char* backendName(Backend backend) {
  switch (backend) {
    case Backend::ClangInterpreter:
      return "clang-interpreter";
    case Backend::SystemCompiler:
      return "system-compiler";
  }
  return "unknown";
}

bool isAvailable(Backend backend) {
#ifdef TCC_JIT_HAVE_CLANG
  return true;
#else
  return backend == Backend::SystemCompiler;
#endif
}

void* Module::symbol(std::string_view name) const {
  if (void* address = findSymbol(name)) return address;
  throw std::out_of_range("tcc::jit: no symbol '" + std::string(name) + "' in the compiled module");
}

static void checkOptions(const CompileOptions& options) {
  if (options.optLevel < 0 || options.optLevel > 3)
    throw CompileError("tcc::jit: optLevel must be 0..3, got " + std::to_string(options.optLevel));
  if (!isAvailable(options.backend))
    throw CompileError(std::string("tcc::jit: this build has no ") + backendName(options.backend) +
                       " backend (built without LLVM/Clang 16); use Backend::SystemCompiler");
}

Binary buildBinary(const std::string& source, const CompileOptions& options) {
  checkOptions(options);
#ifdef TCC_JIT_HAVE_CLANG
  if (options.backend == Backend::ClangInterpreter)
    return {options.backend, buildObjectWithClang(source, options)};
#endif
  return {options.backend, buildSharedLibraryWithSystemCompiler(source, options)};
}

std::shared_ptr<const Module> loadBinary(const Binary& binary, const CompileOptions& options) {
#ifdef TCC_JIT_HAVE_CLANG
  if (binary.backend == Backend::ClangInterpreter) return loadObjectWithOrc(binary.bytes, options.openmp);
#endif
  if (binary.backend == Backend::SystemCompiler) return loadSharedLibrary(binary.bytes, options.openmp);
  throw CompileError(std::string("tcc::jit: cannot load code of the ") + backendName(binary.backend) + " backend");
}

std::string toolchainIdentity(const CompileOptions& options) {
  checkOptions(options);
#ifdef TCC_JIT_HAVE_CLANG
  if (options.backend == Backend::ClangInterpreter) return clangToolchainIdentity();
#endif
  return systemCompilerIdentity();
}

std::shared_ptr<const Module> compile(const std::string& source, const CompileOptions& options) {
  return loadBinary(buildBinary(source, options), options);
}

}  // namespace tcc::jit
