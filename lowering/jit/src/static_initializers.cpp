#include "static_initializers.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "binary.h"

namespace tcc::jit {

using PrioritizedFunction = std::pair<unsigned, llvm::Function*>;

static std::vector<PrioritizedFunction> collect(llvm::iterator_range<llvm::orc::CtorDtorIterator> list) {
  std::vector<PrioritizedFunction> functions;
  for (const auto& element : list)
    if (element.Func) functions.emplace_back(element.Priority, element.Func);
  return functions;
}

static void defineRunner(llvm::Module& module, const char* runnerName, const std::vector<PrioritizedFunction>& calls) {
  llvm::LLVMContext& context = module.getContext();
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  auto* runner = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, runnerName, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", runner));
  for (const auto& [priority, function] : calls) builder.CreateCall(function->getFunctionType(), function);
  builder.CreateRetVoid();
}

void moveStaticInitializersIntoRunners(llvm::Module& module) {
  // Static destructors are registered at run time with __cxa_atexit against
  // the object's __dso_handle, which a bare ORC object has no way to honour.
  for (const char* registration : {"__cxa_atexit", "atexit"})
    if (llvm::Function* function = module.getFunction(registration); function && !function->use_empty())
      throw CompileError(
          "tcc::jit: the clang-interpreter backend does not support static objects with destructors "
          "(the source registers one through " + std::string(registration) + ")");
  // Constructors run lowest priority first, destructors highest first.
  auto constructors = collect(llvm::orc::getConstructors(module));
  std::stable_sort(constructors.begin(), constructors.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto destructors = collect(llvm::orc::getDestructors(module));
  std::reverse(destructors.begin(), destructors.end());  // same priority: last registered first
  std::stable_sort(destructors.begin(), destructors.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const char* listName : {"llvm.global_ctors", "llvm.global_dtors"})
    if (llvm::GlobalVariable* list = module.getNamedGlobal(listName)) list->eraseFromParent();
  defineRunner(module, kStaticInitializerRunner, constructors);
  defineRunner(module, kStaticFinalizerRunner, destructors);
}

}  // namespace tcc::jit
