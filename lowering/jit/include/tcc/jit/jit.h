// Turns a self-contained C++ translation unit into callable code in this
// process.
//
// The source must not include system headers: generated kernels carry their
// own prelude (fixed-width types, the few libc functions they call) and reach
// precompiled library code through `extern "C"` functions, which are resolved
// against the host process (the executable must export them, e.g. with
// -rdynamic / ENABLE_EXPORTS, or they must live in a loaded shared library).
//
// Two backends produce the same code:
//  - ClangInterpreter: clang (Clang 16, linked in) parses and optimizes
//    the source at -O<optLevel> for the host CPU; LLVM compiles it
//    to an object file in memory, and ORC loads that object. No external
//    program runs.
//  - SystemCompiler: `$CXX` (default `c++`) -O<optLevel> -march=native
//    -shared -fPIC, then dlopen.
#ifndef TCC_JIT_JIT_H
#define TCC_JIT_JIT_H

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::jit {

enum class Backend { ClangInterpreter, SystemCompiler };

// "clang-interpreter" or "system-compiler".
const char* backendName(Backend backend);

// Whether this build can use `backend` (ClangInterpreter needs LLVM/Clang 16
// at build time; SystemCompiler is always built).
bool isAvailable(Backend backend);

struct CompileOptions {
  Backend backend = Backend::ClangInterpreter;
  int optLevel = 3;  // 0..3
  bool openmp = false;
  std::vector<std::string> extraFlags;  // passed to the compiler driver as they are
};

// Raised for code that does not compile (or a compiler that cannot run);
// what() holds the compiler's diagnostics.
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& diagnostics) : std::runtime_error(diagnostics) {}
};

// Compiled code loaded into this process. It stays loaded, and the addresses
// it hands out stay valid, for as long as the Module lives.
class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Address of the symbol with this linker name (for `extern "C"` functions,
  // the function's name); throws std::out_of_range if there is none.
  void* symbol(std::string_view name) const;
  // Same, but nullptr if there is none.
  virtual void* findSymbol(std::string_view name) const = 0;
  // symbol() cast to a function pointer type, e.g.
  // module.function<int32_t (*)(tcc_tensor**)>("spmv").
  template <typename FunctionPointer>
  FunctionPointer function(std::string_view name) const {
    return reinterpret_cast<FunctionPointer>(symbol(name));
  }
  virtual Backend backend() const = 0;

 protected:
  Module() = default;
};

// Compiles `source` and loads the result; throws CompileError.
std::shared_ptr<const Module> compile(const std::string& source, const CompileOptions& options = {});

}  // namespace tcc::jit

#endif  // TCC_JIT_JIT_H
