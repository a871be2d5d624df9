// Internal: compiled code as bytes, so it can be cached on disk and loaded
// again without compiling. ClangInterpreter produces an ELF relocatable
// object (loaded with ORC), SystemCompiler a shared library (loaded with
// dlopen).
#ifndef TCC_JIT_SRC_BINARY_H
#define TCC_JIT_SRC_BINARY_H

#include <memory>
#include <string>

#include "tcc/jit/jit.h"

namespace tcc::jit {

struct Binary {
  Backend backend;
  std::string bytes;
};

// Names of the functions the ClangInterpreter backend defines in every
// object to run (and undo) the source's static initializers, since ORC does
// not run an object file's .init_array.
inline constexpr const char* kStaticInitializerRunner = "__tcc_jit_run_static_initializers";
inline constexpr const char* kStaticFinalizerRunner = "__tcc_jit_run_static_finalizers";

Binary buildBinary(const std::string& source, const CompileOptions& options);
std::shared_ptr<const Module> loadBinary(const Binary& binary, const CompileOptions& options);

// Everything besides the source and options that changes the code a
// backend produces (compiler identity and version, host CPU), for cache keys.
std::string toolchainIdentity(const CompileOptions& options);

// Backends (one file each).
std::string buildObjectWithClang(const std::string& source, const CompileOptions& options);
std::shared_ptr<const Module> loadObjectWithOrc(const std::string& objectBytes, bool openmp);
std::string clangToolchainIdentity();

std::string buildSharedLibraryWithSystemCompiler(const std::string& source, const CompileOptions& options);
std::shared_ptr<const Module> loadSharedLibrary(const std::string& sharedLibraryBytes, bool openmp);
std::string systemCompilerIdentity();

}  // namespace tcc::jit

#endif  // TCC_JIT_SRC_BINARY_H
