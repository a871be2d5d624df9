// Internal: replaces a module's llvm.global_ctors / llvm.global_dtors lists
// by two plain functions (kStaticInitializerRunner, kStaticFinalizerRunner)
// that call them in order. ORC links the object file we emit but runs no
// .init_array, so the loader calls these instead; both are always defined,
// which also gives the loader a symbol to look up to link the object eagerly.
// C++ static objects with destructors (registered through __cxa_atexit at
// run time) are rejected with CompileError; generated kernels have none.
#ifndef TCC_JIT_SRC_STATIC_INITIALIZERS_H
#define TCC_JIT_SRC_STATIC_INITIALIZERS_H

namespace llvm {
class Module;
}

namespace tcc::jit {

void moveStaticInitializersIntoRunners(llvm::Module& module);

}  // namespace tcc::jit

#endif  // TCC_JIT_SRC_STATIC_INITIALIZERS_H
