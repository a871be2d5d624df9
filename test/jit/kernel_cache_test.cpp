// KernelCache: memory and disk hits, keys, damaged entries, and concurrent
// use from threads and processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "handwritten_kernels.h"
#include "tcc/jit/kernel_cache.h"
#include "test_tensors.h"

extern char** environ;

namespace tcc::jit::testing {
namespace {

namespace fs = std::filesystem;
using KernelFunction = int (*)(tcc_tensor**);

constexpr const char* kChildCacheDirectory = "TCC_JIT_TEST_CHILD_CACHE_DIR";
constexpr const char* kChildBackend = "TCC_JIT_TEST_CHILD_BACKEND";

class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tcc-jit-cache-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs the SpMV kernel of `module` on random data and checks it against a
// plain loop; returns whether it matched.
bool spmvIsCorrect(const Module& module) {
  CsrMatrix A = randomCsr(400, 300, 0.05, 11);
  std::vector<double> x = randomVector(300, 12), y(A.rows, 0.0);
  tcc_tensor yTensor = denseVectorView(y), ATensor = csrView(A), xTensor = denseVectorView(x);
  tcc_tensor* tensors[] = {&yTensor, &ATensor, &xTensor};
  if (module.function<KernelFunction>("spmv")(tensors) != 0) return false;
  for (int i = 0; i < A.rows; ++i) {
    double expected = 0.0;
    for (long long p = A.pos[i]; p < A.pos[i + 1]; ++p) expected += A.vals[p] * x[A.crd[p]];
    if (std::abs(y[i] - expected) > 1e-12 * (1.0 + std::abs(expected))) return false;
  }
  return true;
}

class KernelCacheTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!isAvailable(GetParam())) GTEST_SKIP() << backendName(GetParam()) << " is not built";
  }
  CompileOptions options() const { return {.backend = GetParam()}; }
  KernelCacheSettings onDisk() const { return {.diskDirectory = directory_.path()}; }

  TemporaryDirectory directory_;
  const std::string source_ = spmvKernel(TCC_SOURCE_DIR);
};

TEST_P(KernelCacheTest, SecondRequestIsAMemoryHit) {
  KernelCache cache(KernelCacheSettings{});
  auto first = cache.getOrCompile(source_, options());
  auto second = cache.getOrCompile(source_, options());
  EXPECT_EQ(first.get(), second.get());
  KernelCacheStatistics statistics = cache.statistics();
  EXPECT_EQ(statistics.compiles, 1u);
  EXPECT_EQ(statistics.memoryHits, 1u);
  EXPECT_TRUE(spmvIsCorrect(*second));
}

TEST_P(KernelCacheTest, FreshCacheOnSameDirectoryHitsDisk) {
  {
    KernelCache writer(onDisk());
    EXPECT_TRUE(spmvIsCorrect(*writer.getOrCompile(source_, options())));
    EXPECT_EQ(writer.statistics().diskWrites, 1u);
  }
  KernelCache reader(onDisk());
  auto module = reader.getOrCompile(source_, options());
  KernelCacheStatistics statistics = reader.statistics();
  EXPECT_EQ(statistics.diskHits, 1u);
  EXPECT_EQ(statistics.compiles, 0u);
  EXPECT_TRUE(spmvIsCorrect(*module));
}

TEST_P(KernelCacheTest, ClearedMemoryCacheHitsDisk) {
  KernelCache cache(onDisk());
  cache.getOrCompile(source_, options());
  cache.clearMemory();
  auto module = cache.getOrCompile(source_, options());
  EXPECT_EQ(cache.statistics().compiles, 1u);
  EXPECT_EQ(cache.statistics().diskHits, 1u);
  EXPECT_TRUE(spmvIsCorrect(*module));
}

TEST_P(KernelCacheTest, DamagedEntryIsRecompiledAndReplaced) {
  KernelCache writer(onDisk());
  writer.getOrCompile(source_, options());
  const fs::path entry = directory_.path() / (writer.keyDigest(source_, options()) + ".kernel");
  ASSERT_TRUE(fs::exists(entry));
  fs::resize_file(entry, fs::file_size(entry) / 2);

  KernelCache reader(onDisk());
  auto module = reader.getOrCompile(source_, options());
  EXPECT_EQ(reader.statistics().diskErrors, 1u);
  EXPECT_EQ(reader.statistics().compiles, 1u);
  EXPECT_TRUE(spmvIsCorrect(*module));

  KernelCache third(onDisk());
  third.getOrCompile(source_, options());
  EXPECT_EQ(third.statistics().diskHits, 1u);
}

TEST_P(KernelCacheTest, ConcurrentThreadsCompileAKeyOnce) {
  KernelCache cache(onDisk());
  constexpr int kThreads = 6;
  std::vector<std::shared_ptr<const Module>> modules(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { modules[t] = cache.getOrCompile(source_, options()); });
  for (auto& thread : threads) thread.join();
  for (const auto& module : modules) EXPECT_EQ(module.get(), modules[0].get());
  EXPECT_EQ(cache.statistics().compiles, 1u);
  EXPECT_EQ(cache.statistics().memoryHits, static_cast<uint64_t>(kThreads - 1));
  EXPECT_TRUE(spmvIsCorrect(*modules[0]));
}

TEST_P(KernelCacheTest, ConcurrentThreadsCompileDifferentKeys) {
  KernelCache cache(onDisk());
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<const Module>> modules(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { modules[t] = cache.getOrCompile(source_, options(), "variant " + std::to_string(t)); });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(cache.statistics().compiles, static_cast<uint64_t>(kThreads));
  for (const auto& module : modules) EXPECT_TRUE(spmvIsCorrect(*module));
}

TEST_P(KernelCacheTest, ConcurrentProcessesShareTheDiskCache) {
  constexpr int kChildren = 3;
  const std::string filter = "--gtest_filter=KernelCacheChildProcess.*";
  const std::string directoryVariable = std::string(kChildCacheDirectory) + "=" + directory_.path().string();
  const std::string backendVariable = std::string(kChildBackend) + "=" + backendName(GetParam());
  std::vector<std::string> environment{directoryVariable, backendVariable};
  for (char** variable = environ; *variable; ++variable) environment.emplace_back(*variable);
  std::vector<char*> envp;
  for (auto& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);
  std::string self = fs::read_symlink("/proc/self/exe").string();
  char* argv[] = {self.data(), const_cast<char*>(filter.c_str()), nullptr};

  // Children report through their exit status only.
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t child = 0;
    ASSERT_EQ(posix_spawn(&child, self.c_str(), &quiet, nullptr, argv, envp.data()), 0);
    children.push_back(child);
  }
  posix_spawn_file_actions_destroy(&quiet);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  KernelCache reader(onDisk());
  EXPECT_TRUE(spmvIsCorrect(*reader.getOrCompile(source_, options())));
  EXPECT_EQ(reader.statistics().diskHits, 1u);
  // Only the finished entry is left: no temporary files.
  int files = 0;
  for ([[maybe_unused]] const auto& file : fs::directory_iterator(directory_.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST_P(KernelCacheTest, KeyDependsOnSourceOptionsAndCallerKey) {
  KernelCache cache(KernelCacheSettings{});
  const std::string base = cache.keyDigest(source_, options());
  EXPECT_EQ(base.size(), 32u);
  EXPECT_EQ(base, cache.keyDigest(source_, options()));
  EXPECT_NE(base, cache.keyDigest(source_ + " ", options()));
  EXPECT_NE(base, cache.keyDigest(source_, options(), "format csr"));
  CompileOptions lower = options();
  lower.optLevel = 2;
  EXPECT_NE(base, cache.keyDigest(source_, lower));
  CompileOptions flagged = options();
  flagged.extraFlags = {"-DVARIANT=1"};
  EXPECT_NE(base, cache.keyDigest(source_, flagged));
}

TEST_P(KernelCacheTest, CompileErrorsPropagateAndAreNotCached) {
  KernelCache cache(onDisk());
  const std::string broken = "extern \"C\" int f() { return missing_thing; }\n";
  EXPECT_THROW(cache.getOrCompile(broken, options()), CompileError);
  EXPECT_THROW(cache.getOrCompile(broken, options()), CompileError);
  EXPECT_EQ(cache.statistics().memoryHits, 0u);
}

TEST_P(KernelCacheTest, ConcurrentThreadsAllSeeACompileError) {
  KernelCache cache(onDisk());
  const std::string broken = "extern \"C\" int f() { return missing_thing; }\n";
  constexpr int kThreads = 4;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      try {
        cache.getOrCompile(broken, options());
      } catch (const CompileError& error) {
        if (std::string(error.what()).find("missing_thing") != std::string::npos) ++errors;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), kThreads);
  // Nothing was stored: the directory holds no entry.
  EXPECT_TRUE(fs::is_empty(directory_.path()));
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelCacheTest,
                         ::testing::Values(Backend::ClangInterpreter, Backend::SystemCompiler),
                         [](const auto& info) {
                           return info.param == Backend::ClangInterpreter ? std::string("ClangInterpreter")
                                                                          : std::string("SystemCompiler");
                         });

// Run only as a child of ConcurrentProcessesShareTheDiskCache.
TEST(KernelCacheChildProcess, CompilesSpmvIntoSharedDirectory) {
  const char* directory = std::getenv(kChildCacheDirectory);
  const char* backend = std::getenv(kChildBackend);
  if (!directory || !backend) GTEST_SKIP() << "runs only as a child process of the disk cache test";
  CompileOptions options;
  options.backend = std::string(backend) == backendName(Backend::SystemCompiler) ? Backend::SystemCompiler
                                                                                  : Backend::ClangInterpreter;
  KernelCache cache({.diskDirectory = fs::path(directory)});
  EXPECT_TRUE(spmvIsCorrect(*cache.getOrCompile(spmvKernel(TCC_SOURCE_DIR), options)));
}

// Environment variables: one test, restoring what it changes.
TEST(KernelCacheSettingsTest, FollowsEnvironmentVariables) {
  struct Saved {
    const char* name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  for (const char* name : {"TCC_NO_DISK_CACHE", "TCC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* value = std::getenv(name);
    saved.push_back({name, value ? std::optional<std::string>(value) : std::nullopt});
    unsetenv(name);
  }
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(KernelCacheSettings::fromEnvironment().diskDirectory, fs::path("/home/someone/.cache/tcc"));
  setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  EXPECT_EQ(KernelCacheSettings::fromEnvironment().diskDirectory, fs::path("/xdg/cache/tcc"));
  setenv("TCC_CACHE_DIR", "/somewhere/kernels", 1);
  EXPECT_EQ(KernelCacheSettings::fromEnvironment().diskDirectory, fs::path("/somewhere/kernels"));
  setenv("TCC_NO_DISK_CACHE", "0", 1);
  EXPECT_TRUE(KernelCacheSettings::fromEnvironment().diskDirectory.has_value());
  setenv("TCC_NO_DISK_CACHE", "1", 1);
  EXPECT_FALSE(KernelCacheSettings::fromEnvironment().diskDirectory.has_value());
  for (const Saved& variable : saved) {
    if (variable.value) setenv(variable.name, variable.value->c_str(), 1);
    else unsetenv(variable.name);
  }
}

}  // namespace
}  // namespace tcc::jit::testing
