// ClangInterpreter backend, compile half: clang's incremental compiler parses
// the source and runs the -O<n> pipeline for the host CPU; LLVM then emits
// the optimized module as an object file in memory. We stop short of the
// interpreter's own execution engine so that the object can be cached on
// disk and loaded later without clang (see orc_object_module.cpp).
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <clang/Basic/Diagnostic.h>
#include <clang/Driver/Options.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Interpreter/Interpreter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Option/ArgList.h>
#include <llvm/Option/Option.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/MC/SubtargetFeature.h>

#include "binary.h"
#include "static_initializers.h"

namespace tcc::jit {

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

static std::string hostFeatureString() {
  llvm::StringMap<bool> hostFeatures;
  llvm::SubtargetFeatures features;
  if (llvm::sys::getHostCPUFeatures(hostFeatures))
    for (const auto& feature : hostFeatures) features.AddFeature(feature.first(), feature.second);
  return features.getString();
}

static llvm::CodeGenOpt::Level codeGenLevel(int optLevel) {
  switch (optLevel) {
    case 0:
      return llvm::CodeGenOpt::None;
    case 1:
      return llvm::CodeGenOpt::Less;
    case 2:
      return llvm::CodeGenOpt::Default;
    default:
      return llvm::CodeGenOpt::Aggressive;
  }
}

std::string clangToolchainIdentity() {
  static const std::string identity =
      "clang-" LLVM_VERSION_STRING " cpu=" + llvm::sys::getHostCPUName().str() + " features=" + hostFeatureString();
  return identity;
}

static std::string takeErrorMessage(llvm::Error error) { return llvm::toString(std::move(error)); }

// The interpreter calls the source "input_line_0", included from "<<< inputs
// >>>"; say "kernel.cpp" as the system-compiler backend does.
static std::string tidyDiagnostics(const std::string& diagnostics) {
  std::istringstream lines(diagnostics);
  std::string line, tidy;
  while (std::getline(lines, line)) {
    if (line.starts_with("In file included from <<< inputs >>>")) continue;
    if (line.starts_with("input_line_")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) line = "kernel.cpp" + line.substr(colon);
    }
    tidy += line + "\n";
  }
  return tidy;
}

// Object-file code for the host CPU, as the system compiler would produce
// with -O<n> -march=native -fPIC.
static std::string emitObject(llvm::Module& module, int optLevel) {
  std::string error;
  const std::string triple = module.getTargetTriple();
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw CompileError("tcc::jit: no LLVM target for " + triple + ": " + error);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), hostFeatureString(), llvm::TargetOptions(), llvm::Reloc::PIC_,
      llvm::CodeModel::Small, codeGenLevel(optLevel)));
  if (!machine) throw CompileError("tcc::jit: cannot create an LLVM target machine for " + triple);
  module.setDataLayout(machine->createDataLayout());

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream objectStream(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, objectStream, nullptr, llvm::CGFT_ObjectFile))
    throw CompileError("tcc::jit: LLVM cannot emit object files for " + triple);
  passes.run(module);
  return std::string(object.data(), object.size());
}

// The incremental compiler drops the driver's complaints about its
// arguments, so check the caller's flags against the driver's table first.
static void checkDriverFlags(const std::vector<std::string>& flags) {
  std::vector<const char*> arguments;
  for (const std::string& flag : flags) arguments.push_back(flag.c_str());
  unsigned missingIndex = 0, missingCount = 0;
  llvm::opt::InputArgList parsed = clang::driver::getDriverOptTable().ParseArgs(arguments, missingIndex, missingCount);
  if (missingCount > 0)
    throw CompileError(std::string("tcc::jit: clang flag '") + arguments[missingIndex] + "' is missing its value");
  for (const llvm::opt::Arg* argument : parsed) {
    const llvm::opt::Option& option = argument->getOption();
    const std::string text = argument->getAsString(parsed);
    if (option.matches(clang::driver::options::OPT_UNKNOWN) || option.getName().empty() ||
        option.getKind() == llvm::opt::Option::RemainingArgsClass ||
        option.getKind() == llvm::opt::Option::RemainingArgsJoinedClass)
      throw CompileError("tcc::jit: unknown clang flag '" + text + "'");
    if (option.matches(clang::driver::options::OPT_INPUT))
      throw CompileError("tcc::jit: '" + text + "' is not a flag (the source comes as text)");
  }
}

std::string buildObjectWithClang(const std::string& source, const CompileOptions& options) {
  initializeNativeTarget();
  checkDriverFlags(options.extraFlags);
  const std::string optFlag = "-O" + std::to_string(options.optLevel);
  // -ffp-contract=off: no fused multiply-adds the source did not write, so
  // both backends (and plain host builds) give bit-identical results.
  // -fno-unroll-loops: like g++ -O3, which does not unroll; clang's unrolling
  // (and unroll-and-jam of the row loop) more than doubled the compile time
  // of a CSR SpMV for a run time within noise (bench/jit/RESULTS.md). Pass
  // -funroll-loops in extraFlags to get it back.
  std::vector<const char*> arguments = {optFlag.c_str(), "-march=native", "-fPIC", "-ffp-contract=off",
                                        "-fno-unroll-loops"};
  // simd pragmas need no runtime: honoured in every kernel.
  arguments.push_back(options.openmp ? "-fopenmp" : "-fopenmp-simd");
  for (const std::string& flag : options.extraFlags) arguments.push_back(flag.c_str());

  auto instance = clang::IncrementalCompilerBuilder::create(arguments);
  if (!instance) throw CompileError("tcc::jit: clang rejected the options: " + takeErrorMessage(instance.takeError()));

  // The stream outlives the interpreter, which reports into it.
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  (*instance)->getDiagnostics().setClient(
      new clang::TextDiagnosticPrinter(diagnosticStream, &(*instance)->getDiagnosticOpts()), /*ShouldOwnClient=*/true);

  std::string object;
  {
    auto interpreter = clang::Interpreter::create(std::move(*instance));
    if (!interpreter) throw CompileError("tcc::jit: cannot start clang: " + takeErrorMessage(interpreter.takeError()));
    auto unit = (*interpreter)->Parse(source);
    if (!unit) {
      std::string message = takeErrorMessage(unit.takeError());
      diagnosticStream.flush();
      throw CompileError(diagnostics.empty() ? message : tidyDiagnostics(diagnostics));
    }
    if (!unit->TheModule) throw CompileError("tcc::jit: clang produced no code for the source");
    // The module lives in the interpreter's LLVM context, so it must go first
    // (declared after the interpreter), also when an exception unwinds.
    std::unique_ptr<llvm::Module> module = std::move(unit->TheModule);
    moveStaticInitializersIntoRunners(*module);
    object = emitObject(*module, options.optLevel);
  }
  return object;
}

}  // namespace tcc::jit
