// ClangInterpreter backend, load half: links an object file into a private
// ORC LLJIT whose symbols fall back to the host process, so kernels can call
// `extern "C"` functions of the executable and its shared libraries.
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "binary.h"

namespace tcc::jit {
namespace {

std::string errorText(llvm::Error error) { return llvm::toString(std::move(error)); }

struct LinkErrors {
  std::mutex mutex;
  std::string text;
};

class OrcObjectModule final : public Module {
 public:
  explicit OrcObjectModule(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}

  ~OrcObjectModule() override {
    if (auto finalizers = jit_->lookup(kStaticFinalizerRunner)) finalizers->toPtr<void (*)()>()();
    else llvm::consumeError(finalizers.takeError());
  }

  void* findSymbol(std::string_view name) const override {
    auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
    if (!address) {
      llvm::consumeError(address.takeError());
      return nullptr;
    }
    return address->toPtr<void*>();
  }

  Backend backend() const override { return Backend::ClangInterpreter; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// Clang's -fopenmp code calls libomp's __kmpc_* entry points, which the host
// process need not have loaded. Returns the name it was loaded by.
const std::string& openmpRuntimeName() {
  static std::once_flag once;
  static std::string failure, loaded;
  std::call_once(once, [] {
    for (const char* name : {"libomp.so.5", "libomp.so"})
      if (!llvm::sys::DynamicLibrary::LoadLibraryPermanently(name, &failure)) {
        failure.clear();
        loaded = name;
        return;
      }
  });
  if (!failure.empty()) throw CompileError("tcc::jit: OpenMP kernels need libomp, which cannot be loaded: " + failure);
  return loaded;
}

}  // namespace

std::shared_ptr<const Module> loadObjectWithOrc(const std::string& objectBytes, bool openmp) {
  initializeNativeTarget();
  if (openmp) openmpRuntimeName();
  auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder) throw CompileError("tcc::jit: cannot describe the host: " + errorText(machineBuilder.takeError()));
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*machineBuilder))
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                 .create();
  if (!jit) throw CompileError("tcc::jit: cannot start ORC: " + errorText(jit.takeError()));
  // Link errors (such as unresolved symbols) go to ORC's error reporter;
  // collect them for the CompileError instead of printing them.
  auto linkErrors = std::make_shared<LinkErrors>();
  (*jit)->getExecutionSession().setErrorReporter([linkErrors](llvm::Error error) {
    std::lock_guard lock(linkErrors->mutex);
    linkErrors->text += errorText(std::move(error)) + "\n";
  });

  // OpenMP's API (omp_get_thread_num, ...) comes from libomp itself, ahead
  // of the process's symbols: a host linked with GCC's libgomp exports the
  // same names, and libgomp's omp_get_thread_num in a libomp team answers 0
  // in every thread (so per-thread workspaces would be shared).
  if (openmp) {
    auto openmpSymbols = llvm::orc::DynamicLibrarySearchGenerator::Load(
      openmpRuntimeName().c_str(), (*jit)->getDataLayout().getGlobalPrefix(),
      [](const llvm::orc::SymbolStringPtr& name) {
        llvm::StringRef text = *name;
        return text.startswith("omp_") || text.startswith("__kmpc_");
      });
    if (!openmpSymbols) throw CompileError("tcc::jit: " + errorText(openmpSymbols.takeError()));
    (*jit)->getMainJITDylib().addGenerator(std::move(*openmpSymbols));
  }
  auto processSymbols = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!processSymbols) throw CompileError("tcc::jit: " + errorText(processSymbols.takeError()));
  (*jit)->getMainJITDylib().addGenerator(std::move(*processSymbols));

  if (auto error = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(objectBytes, "tcc-kernel.o")))
    throw CompileError("tcc::jit: cannot load the compiled object: " + errorText(std::move(error)));

  // Looking a symbol up links the whole object now, so an unresolved
  // external shows up here rather than at the first symbol() call.
  auto initializers = (*jit)->lookup(kStaticInitializerRunner);
  if (!initializers) {
    std::string message = "tcc::jit: cannot link the compiled code: " + errorText(initializers.takeError());
    std::lock_guard lock(linkErrors->mutex);
    throw CompileError(linkErrors->text + message);
  }
  initializers->toPtr<void (*)()>()();
  return std::make_shared<OrcObjectModule>(std::move(*jit));
}

}  // namespace tcc::jit
