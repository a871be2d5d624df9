// ClangInterpreter backend, compile half: clang parses the source as one
// in-memory file, kernel.cpp, and runs the -O<n> pipeline for the host CPU;
// LLVM then emits the optimized module as an object file in memory. The
// object is loaded with ORC (see orc_object_module.cpp), so it can also be
// cached on disk and loaded later without clang.
//
// A plain CompilerInstance, not clang::Interpreter: clang 16's incremental
// parser crashes (in IncrementalParser::CleanUpPTU) undoing a source with an
// error after a struct declared inside extern "C" { }, which the generated
// prelude has; a one-shot compile needs none of its incremental machinery.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Driver/Options.h>
#include <clang/Driver/Tool.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Option/ArgList.h>
#include <llvm/Option/Option.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

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

// The source's name in diagnostics, as the system-compiler backend says it.
static constexpr const char* kSourceName = "kernel.cpp";

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

// Checks the caller's flags against the driver's table first, for a message
// that names the bad flag, and so that no file name slips in as an input.
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

// The -cc1 arguments of `clang++ ARGUMENTS -x c++ -c kernel.cpp`, from
// clang's driver, with this program as the driver's path (as clang's
// incremental compiler builder does; the driver finds its resource folder
// from it).
static std::vector<std::string> frontendArguments(std::vector<const char*> arguments) {
  const std::string program = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  arguments.insert(arguments.begin(), program.c_str());
  for (const char* input : {"-xc++", "-c", kSourceName}) arguments.push_back(input);

  std::string complaints;
  llvm::raw_string_ostream complaintStream(complaints);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diagnosticOptions(new clang::DiagnosticOptions);
  clang::DiagnosticsEngine diagnostics(new clang::DiagnosticIDs, diagnosticOptions,
                                       new clang::TextDiagnosticPrinter(complaintStream, diagnosticOptions.get()));
  clang::driver::Driver driver(program, llvm::sys::getProcessTriple(), diagnostics);
  driver.setCheckInputsExist(false);  // the source is in memory
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(arguments));
  complaintStream.flush();
  if (!compilation || diagnostics.hasErrorOccurred())
    throw CompileError("tcc::jit: clang rejected the options: " + complaints);
  const clang::driver::JobList& jobs = compilation->getJobs();
  const auto* command = jobs.empty() ? nullptr : llvm::dyn_cast<clang::driver::Command>(&*jobs.begin());
  if (!command || llvm::StringRef(command->getCreator().getName()) != "clang")
    throw CompileError("tcc::jit: clang's driver planned no compile job for the options");
  std::vector<std::string> frontend(command->getArguments().begin(), command->getArguments().end());
  if (!frontend.empty() && frontend.front() == "-cc1") frontend.erase(frontend.begin());
  return frontend;
}

// Parses `source` as kernel.cpp and runs the optimization pipeline; the
// module lives in `context`. Throws CompileError with clang's diagnostics.
static std::unique_ptr<llvm::Module> compileToModule(const std::string& source,
                                                     const std::vector<std::string>& frontendFlags,
                                                     llvm::LLVMContext& context) {
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  clang::CompilerInstance compiler;
  {
    std::vector<const char*> flags;
    for (const std::string& flag : frontendFlags) flags.push_back(flag.c_str());
    llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options(new clang::DiagnosticOptions);
    clang::DiagnosticsEngine flagDiagnostics(new clang::DiagnosticIDs, options,
                                             new clang::TextDiagnosticPrinter(diagnosticStream, options.get()));
    if (!clang::CompilerInvocation::CreateFromArgs(compiler.getInvocation(), flags, flagDiagnostics)) {
      diagnosticStream.flush();
      throw CompileError("tcc::jit: clang rejected the options: " + diagnostics);
    }
  }
  // Created after the flags are read, so that -W flags apply.
  compiler.createDiagnostics(new clang::TextDiagnosticPrinter(diagnosticStream, &compiler.getDiagnosticOpts()),
                             /*ShouldOwnClient=*/true);
  // The driver asks the frontend to leak its state at exit, as a compiler
  // process may; this one lives on.
  compiler.getFrontendOpts().DisableFree = false;
  compiler.getCodeGenOpts().DisableFree = false;
  // Not "N errors generated." on stderr: the diagnostics go to the caller.
  compiler.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());
  compiler.getPreprocessorOpts().addRemappedFile(
      kSourceName, llvm::MemoryBuffer::getMemBufferCopy(source, kSourceName).release());

  clang::EmitLLVMOnlyAction action(&context);
  const bool compiled = compiler.ExecuteAction(action);
  std::unique_ptr<llvm::Module> module = action.takeModule();
  diagnosticStream.flush();
  if (!compiled || compiler.getDiagnostics().hasErrorOccurred())
    throw CompileError(diagnostics.empty() ? "tcc::jit: clang failed without a diagnostic" : diagnostics);
  if (!module) throw CompileError("tcc::jit: clang produced no code for the source");
  return module;
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

  // The module lives in the context, so it must go first (declared after it),
  // also when an exception unwinds.
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = compileToModule(source, frontendArguments(arguments), context);
  moveStaticInitializersIntoRunners(*module);
  return emitObject(*module, options.optLevel);
}

}  // namespace tcc::jit
