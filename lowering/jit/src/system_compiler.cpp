// SystemCompiler backend, compile half: writes the source to a fresh
// temporary folder, runs `$CXX -O<n> -march=native -shared -fPIC
// -ffp-contract=off` there (plus -fsanitize=thread in a ThreadSanitizer build) (see clang_object_builder.cpp for the last) and
// reads back the shared library.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "binary.h"

extern char** environ;

namespace tcc::jit {
namespace {

namespace fs = std::filesystem;

// The compiler a build of tcc uses when $CXX is unset: c++, or the one a
// ThreadSanitizer build was built with (see lowering/jit/CMakeLists.txt).
#ifndef TCC_JIT_SYSTEM_COMPILER
#define TCC_JIT_SYSTEM_COMPILER "c++"
#endif

// The compiler command: $CXX split on blanks (so "ccache g++" works), or the
// default above; in a ThreadSanitizer build, with -fsanitize=thread after it
// (so the command, and with it the disk cache's key, says so).
std::vector<std::string> compilerCommand() {
  const char* fromEnvironment = std::getenv("CXX");
  std::istringstream words(fromEnvironment && *fromEnvironment ? fromEnvironment : TCC_JIT_SYSTEM_COMPILER);
  std::vector<std::string> command{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  if (command.empty()) command.push_back(TCC_JIT_SYSTEM_COMPILER);
#ifdef TCC_JIT_KERNEL_SANITIZE_FLAG
  command.push_back(TCC_JIT_KERNEL_SANITIZE_FLAG);
#endif
  return command;
}

class TemporaryFolder {
 public:
  TemporaryFolder() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tcc-jit-XXXXXX";
    if (!mkdtemp(pattern.data())) throw CompileError("tcc::jit: cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw CompileError("tcc::jit: cannot write " + path.string());
}

// Runs `command` with stdout and stderr sent to `logPath`; returns its exit
// status, or throws if it cannot start.
int run(const std::vector<std::string>& command, const fs::path& logPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  int failure = posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failure != 0) throw CompileError("tcc::jit: cannot run the system compiler '" + command[0] + "': " + std::strerror(failure));
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw CompileError(std::string("tcc::jit: waiting for the system compiler: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// What -march=native compiles for: the first CPU's model and flags lines of
// /proc/cpuinfo, so a cache folder shared between machines never hands out
// code for another CPU.
std::string hostCpuDescription() {
  static const std::string description = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(cpuinfo, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.starts_with("model name")) model = line;
      if (flags.empty() && (line.starts_with("flags") || line.starts_with("Features"))) flags = line;
    }
    return model + "\n" + flags;
  }();
  return description;
}

// The compiler's own `--version` text, asked once per command.
std::string compilerVersion(const std::vector<std::string>& command) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::string> versions;
  std::lock_guard lock(mutex);
  if (auto found = versions.find(command); found != versions.end()) return found->second;
  std::string version;
  try {
    TemporaryFolder folder;
    std::vector<std::string> query = command;
    query.push_back("--version");
    if (run(query, folder.path() / "version.txt") == 0) version = readFile(folder.path() / "version.txt");
  } catch (const CompileError&) {
    // No compiler: compiling will say so.
  }
  return versions[command] = version;
}

}  // namespace

std::string systemCompilerIdentity() {
  const std::vector<std::string> command = compilerCommand();
  std::string identity = "system-compiler:";
  for (const std::string& word : command) identity += " " + word;
  return identity + "\n" + compilerVersion(command) + hostCpuDescription();
}

std::string buildSharedLibraryWithSystemCompiler(const std::string& source, const CompileOptions& options) {
  TemporaryFolder folder;
  const fs::path sourcePath = folder.path() / "kernel.cpp";
  const fs::path libraryPath = folder.path() / "kernel.so";
  const fs::path logPath = folder.path() / "diagnostics.txt";
  writeFile(sourcePath, source);

  std::vector<std::string> command = compilerCommand();
  for (const char* flag : {"-march=native", "-shared", "-fPIC", "-ffp-contract=off"}) command.push_back(flag);
  command.push_back("-O" + std::to_string(options.optLevel));
  // simd pragmas need no runtime: honoured in every kernel.
  command.push_back(options.openmp ? "-fopenmp" : "-fopenmp-simd");
  command.insert(command.end(), options.extraFlags.begin(), options.extraFlags.end());
  command.insert(command.end(), {"-o", libraryPath.string(), sourcePath.string()});

  int status = run(command, logPath);
  if (status != 0) {
    // Name the source "kernel.cpp", not by its temporary path.
    std::string diagnostics = readFile(logPath);
    const std::string folderPrefix = folder.path().string() + "/";
    for (size_t at; (at = diagnostics.find(folderPrefix)) != std::string::npos;) diagnostics.erase(at, folderPrefix.size());
    throw CompileError(diagnostics.empty() ? "tcc::jit: the system compiler failed with status " + std::to_string(status)
                                           : diagnostics);
  }
  return readFile(libraryPath);
}

}  // namespace tcc::jit
