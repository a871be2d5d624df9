// Permanents over MPI ranks: `mpirun -n K` (K = 1..4) gives the result of a
// single process (to the bit: both add the chunks' partial sums in chunk
// order) and of brute force or a closed form, through the library and
// through `tcc run`; a stopped or killed run resumes from its checkpoint and
// computes only the chunks not yet done. Skipped when tcc was built without
// MPI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "permanent_mpi_cases.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;

#define SKIP_WITHOUT_MPI() \
  if (!TCC_HAVE_MPI) GTEST_SKIP() << "tcc was built without MPI (OpenMPI not found at configure time)"

std::filesystem::path scratch(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("tcc_perm_mpi_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name);
  std::filesystem::remove(path);
  return path;
}

std::string contentsOf(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// mpirun as CI runs it: as root, on 2 cores; a silent rank counts as lost
// after `silence` seconds. ASAN_OPTIONS is read by AddressSanitizer builds
// only: OpenMPI has no frame pointers, and the memory it keeps to exit is
// recognised (test/lsan_suppressions.txt) only on stacks unwound in full.
std::string mpirun(int ranks, int silence = 30) {
  return "ASAN_OPTIONS=fast_unwind_on_malloc=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TCC_PERMANENT_RANK_TIMEOUT=" +
         std::to_string(silence) + " exec timeout 120 '" + TCC_MPIEXEC + "' --oversubscribe -n " +
         std::to_string(ranks) + " ";
}

struct Outcome {
  int exitCode = -1;
  std::string out, err;
};

pid_t start(const std::string& command, const std::filesystem::path& out, const std::filesystem::path& err) {
  std::string line = command + " > '" + out.string() + "' 2> '" + err.string() + "'";
  pid_t pid = fork();
  if (pid == 0) {
    // A test run started in the background inherits SIGINT ignored; mpirun must hear Ctrl-C.
    signal(SIGINT, SIG_DFL);
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

Outcome finish(pid_t pid, const std::filesystem::path& out, const std::filesystem::path& err) {
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome outcome{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), contentsOf(out), contentsOf(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return outcome;
}

Outcome run(const std::string& command) {
  auto out = scratch("out"), err = scratch("err");
  return finish(start(command, out, err), out, err);
}

// The probe's "NAME VALUE" lines.
std::map<std::string, std::string> valuesOf(const std::string& output) {
  std::map<std::string, std::string> values;
  std::istringstream lines(output);
  std::string name, value;
  while (lines >> name && std::getline(lines >> std::ws, value)) values[name] = value;
  return values;
}

int doneChunksIn(const std::filesystem::path& checkpoint) {
  std::ifstream in(checkpoint);
  std::string line;
  int done = 0;
  while (std::getline(in, line)) done += line.rfind("done ", 0) == 0;
  return done;
}

// From rank 0's summary "chunks computed in this run by rank: 0: A, 1: B (D were done before)".
std::pair<int, int> computedAndDoneBefore(const std::string& err) {
  std::smatch match;
  if (!std::regex_search(err, match, std::regex("computed in this run by rank:([^(]*)\\((\\d+) were done before\\)")))
    return {-1, -1};
  int computed = 0;
  std::string counts = match[1];
  std::regex each(":\\s*(\\d+)");
  for (auto it = std::sregex_iterator(counts.begin(), counts.end(), each); it != std::sregex_iterator(); ++it)
    computed += std::stoi((*it)[1]);
  return {computed, std::stoi(match[2])};
}

// A case computed on this process alone.
std::string singleProcessValue(const MpiCase& each) {
  rt::Tensor matrix = toTensor(each.matrix, rt::TensorFormat::csc());
  if (each.exact) return std::to_string(exactPermanent(matrix));
  char text[40];
  std::snprintf(text, sizeof text, "%a", floatPermanent(matrix));
  return text;
}

TEST(PermanentMpi, EveryRankCountGivesTheSingleProcessResultAndTheOracles) {
  SKIP_WITHOUT_MPI();
  const std::vector<MpiCase> cases = mpiCases();
  for (int ranks : {1, 2, 3, 4}) {  // 3 divides neither 4096 nor 256 chunks
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    Outcome outcome = run(mpirun(ranks) + "'" + TCC_MPI_PROBE + "'");
    ASSERT_EQ(outcome.exitCode, 0) << outcome.out << outcome.err;
    std::map<std::string, std::string> values = valuesOf(outcome.out);
    EXPECT_EQ(values.size(), cases.size()) << outcome.out;  // rank 0 alone prints
    for (const MpiCase& each : cases) {
      SCOPED_TRACE(each.name);
      ASSERT_TRUE(values.count(each.name)) << outcome.out;
      if (!each.error.empty()) {
        EXPECT_THAT(values[each.name], HasSubstr("error: perm: "));
        EXPECT_THAT(values[each.name], HasSubstr(each.error));
        continue;
      }
      const std::string single = singleProcessValue(each);
      if (each.exact) {
        EXPECT_EQ(values[each.name], single);
        if (each.tolerance == 0) EXPECT_EQ(std::stod(values[each.name]), each.expected);
      } else {
        double distributed = std::strtod(values[each.name].c_str(), nullptr);
        double alone = std::strtod(single.c_str(), nullptr);
        EXPECT_LE(std::abs(distributed - alone), 1e-12 * std::abs(alone));
        if (each.tolerance >= 0) EXPECT_NEAR(distributed, each.expected, each.tolerance);
      }
    }
  }
}

TEST(PermanentMpi, TccRunPrintsTheResultOnceOnRankZero) {
  SKIP_WITHOUT_MPI();
  const std::string examples = std::string(TCC_SOURCE_DIR) + "/examples";
  for (const char* program : {"perm_exact.tc --in A=data/LF10_pattern.mtx", "perm.tc --in A=data/LF10.mtx"}) {
    SCOPED_TRACE(program);
    std::string arguments = std::string(" run ") + program + " --print p";
    Outcome alone = run("cd '" + examples + "' && exec '" + TCC_EXECUTABLE + "'" + arguments);
    Outcome ranks = run("cd '" + examples + "' && " + mpirun(3) + "'" + TCC_EXECUTABLE + "'" + arguments);
    ASSERT_EQ(alone.exitCode, 0) << alone.err;
    ASSERT_EQ(ranks.exitCode, 0) << ranks.err;
    EXPECT_EQ(ranks.out, alone.out);  // the same lines, once
    EXPECT_THAT(ranks.out, HasSubstr("p: "));
  }
}

TEST(PermanentMpi, AResumedRunComputesOnlyTheChunksNotDone) {
  SKIP_WITHOUT_MPI();
  auto checkpoint = scratch("checkpoint");
  const std::string probe = std::string("'") + TCC_MPI_PROBE + "' --case random20 --checkpoint '" +
                            checkpoint.string() + "' --progress";
  Outcome stopped = run(mpirun(3) + probe + " --chunk-limit 1000");
  EXPECT_NE(stopped.exitCode, 0);
  EXPECT_THAT(stopped.out, HasSubstr("stopped at the chunk limit after"));
  EXPECT_THAT(stopped.out, HasSubstr("checkpoint saved to"));
  const int done = doneChunksIn(checkpoint);
  EXPECT_GE(done, 1000);
  EXPECT_LT(done, 4096);

  // Resumed on another rank count: every chunk once, and the result of one process.
  Outcome resumed = run(mpirun(2) + probe);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.out << resumed.err;
  auto [computed, doneBefore] = computedAndDoneBefore(resumed.err);
  EXPECT_EQ(doneBefore, done) << resumed.err;
  EXPECT_EQ(computed, 4096 - done) << resumed.err;
  EXPECT_EQ(doneChunksIn(checkpoint), 4096);
  EXPECT_EQ(valuesOf(resumed.out)["random20"], singleProcessValue(mpiCase("random20")));
  std::filesystem::remove(checkpoint);
}

pid_t parentOf(pid_t pid) {
  std::string stat = contentsOf("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  char state;
  pid_t parent = 0;
  fields >> state >> parent;
  return parent;
}

// The rank in a process's environment, or -1.
int rankOf(pid_t pid) {
  std::string environment = contentsOf("/proc/" + std::to_string(pid) + "/environ");
  std::smatch match;
  if (!std::regex_search(environment, match, std::regex("OMPI_COMM_WORLD_RANK=(\\d+)"))) return -1;
  return std::stoi(match[1]);
}

// The MPI ranks among the descendants of `launcher`, by rank. A child a
// rank starts inherits its environment (a sanitizer's symbolizer, say), so
// a rank is the process with the variable whose parent lacks it.
std::map<int, pid_t> ranksUnder(pid_t launcher) {
  std::map<int, pid_t> ranks;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    bool descendant = false;
    for (pid_t up = parentOf(pid); up > 1 && !descendant; up = parentOf(up)) descendant = up == launcher;
    if (!descendant) continue;
    const int rank = rankOf(pid);
    if (rank >= 0 && rankOf(parentOf(pid)) < 0) ranks[rank] = pid;
  }
  return ranks;
}

void writeMatrixMarket(const Matrix& matrix, const std::filesystem::path& path) {
  std::ofstream out(path);
  int nonzeros = 0;
  for (double value : matrix.values) nonzeros += value != 0;
  out << "%%MatrixMarket matrix coordinate real general\n" << matrix.n << " " << matrix.n << " " << nonzeros << "\n";
  out.precision(17);
  for (int row = 0; row < matrix.n; ++row)
    for (int column = 0; column < matrix.n; ++column)
      if (matrix.at(row, column) != 0) out << row + 1 << " " << column + 1 << " " << matrix.at(row, column) << "\n";
}

// Starts `mpirun -n 2 tcc run perm.tc` on a permanent of order n (n = 29:
// about a second), lets `interrupt` stop it once the work is under way, checks that it
// failed with `message` and saved its checkpoint, then (if `resume`)
// resumes it: every chunk not done is computed once, and the result is one
// process's.
// With `withoutGpus`, on the cuda target with TCC_CUDA_DEVICE=none: ranks
// without a GPU, which sum the GPU kernel's chunks on the CPU.
void stopAndResume(int n, const std::function<void(pid_t launcher)>& interrupt, const std::string& message,
                   int silence, bool resume = true, bool withoutGpus = false) {
  Matrix matrix = randomSparse(n, 0.2, 31);
  auto input = scratch("a.mtx"), checkpoint = scratch("checkpoint");
  writeMatrixMarket(matrix, input);
  const std::string command = "'" + std::string(TCC_EXECUTABLE) + "' run '" + TCC_SOURCE_DIR +
                              "/examples/perm.tc' --in A=" + input.string() + " --checkpoint " + checkpoint.string() +
                              (withoutGpus ? " --target cuda" : "");
  const std::string environment = withoutGpus ? "TCC_CUDA_DEVICE=none " : "";
  auto mpirun = [&](int ranks, int silenceSeconds = 30) { return environment + permanent_test::mpirun(ranks, silenceSeconds); };
  auto out = scratch("out"), err = scratch("err");
  pid_t launcher = start(mpirun(2, silence) + command, out, err);
  // Rank 0 writes the checkpoint once every rank has reached the permanent,
  // just before the work.
  auto began = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(checkpoint) && std::chrono::steady_clock::now() - began < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  interrupt(launcher);
  Outcome stopped = finish(launcher, out, err);
  EXPECT_NE(stopped.exitCode, 0);
  EXPECT_THAT(stopped.err, HasSubstr(message));
  EXPECT_THAT(stopped.err, HasSubstr("checkpoint saved to " + checkpoint.string()));
  EXPECT_THAT(stopped.out, ::testing::Not(HasSubstr("p: ")));
  const int done = doneChunksIn(checkpoint);
  EXPECT_LT(done, 4096) << "the run ended before it was stopped";
  if (!resume) {
    EXPECT_GT(done, 0);
    std::filesystem::remove(input);
    std::filesystem::remove(checkpoint);
    return;
  }

  Outcome resumed = run(mpirun(2) + command + " --progress");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  auto [computed, doneBefore] = computedAndDoneBefore(resumed.err);
  EXPECT_EQ(doneBefore, done) << resumed.err;
  EXPECT_EQ(computed, 4096 - done) << resumed.err;
  const double alone = floatPermanent(toTensor(matrix, rt::TensorFormat::csc()));
  std::smatch match;
  ASSERT_TRUE(std::regex_search(resumed.out, match, std::regex("= (\\S+)"))) << resumed.out;
  EXPECT_LE(std::abs(std::stod(match[1]) - alone), 1e-12 * std::abs(alone));
  std::filesystem::remove(input);
  std::filesystem::remove(checkpoint);
}

void signalRank(pid_t launcher, int rank, int signal) {
  std::map<int, pid_t> ranks = ranksUnder(launcher);
  ASSERT_TRUE(ranks.count(rank)) << "rank " << rank << " not found under mpirun";
  ::kill(ranks[rank], signal);
}

TEST(PermanentMpi, AKilledRankStopsTheRunCleanlyAndItsCheckpointResumes) {
  SKIP_WITHOUT_MPI();
  // mpirun answers the loss with SIGTERM to the other ranks.
  stopAndResume(29, [](pid_t launcher) { signalRank(launcher, 1, SIGKILL); }, "tcc: error: perm: ", 30);
}

TEST(PermanentMpi, CtrlCStopsEveryRankCleanlyWithTheCheckpointSaved) {
  SKIP_WITHOUT_MPI();
  // Ctrl-C reaches mpirun once (the ranks have process groups of their own
  // and hear of it from mpirun; a second one would kill them at once).
  // mpirun passes it on only after a second or two: n = 31, and no resume
  // (the other tests resume).
  stopAndResume(
      31,
      [](pid_t launcher) {
        std::map<int, pid_t> ranks = ranksUnder(launcher);
        ASSERT_TRUE(ranks.count(0)) << "rank 0 not found under mpirun";
        ::kill(parentOf(ranks[0]), SIGINT);
      },
      "tcc: error: perm: interrupted after", 30, /*resume=*/false);
}

TEST(PermanentMpi, ASilentRankIsTakenAsLostInsteadOfHangingTheRun) {
  SKIP_WITHOUT_MPI();
  stopAndResume(29, [](pid_t launcher) { signalRank(launcher, 1, SIGSTOP); }, "rank 1 sent nothing for 2 s", 2);
}

TEST(PermanentMpi, AKilledRankWithoutAGpuStopsCleanlyAndResumesInTheGpuOrder) {
  SKIP_WITHOUT_MPI();
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit (no cuda target)";
  stopAndResume(29, [](pid_t launcher) { signalRank(launcher, 1, SIGKILL); }, "tcc: error: perm: ", 30,
                /*resume=*/true, /*withoutGpus=*/true);
}

// A cuda-target run whose ranks get no GPU (TCC_CUDA_DEVICE=none, as on
// nodes without one): each sums the GPU kernel's chunks (its column order)
// with the CPU kernel, and the result is one process's within rounding.
TEST(PermanentMpi, CudaTargetRanksWithoutAGpuSumTheGpuChunksOnTheCpu) {
  SKIP_WITHOUT_MPI();
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit (no cuda target)";
  const std::string examples = std::string(TCC_SOURCE_DIR) + "/examples";
  const std::string arguments = " run perm.tc --in A=data/LF10.mtx";
  Outcome alone = run("cd '" + examples + "' && exec '" + TCC_EXECUTABLE + "'" + arguments);
  Outcome ranks = run("cd '" + examples + "' && TCC_CUDA_DEVICE=none " + mpirun(3) + "'" + TCC_EXECUTABLE + "'" +
                      arguments + " --target cuda --progress");
  ASSERT_EQ(alone.exitCode, 0) << alone.err;
  ASSERT_EQ(ranks.exitCode, 0) << ranks.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_THAT(ranks.err, ::testing::ContainsRegex("perm: rank " + std::to_string(rank) +
                                                    " \\(no GPU\\): cpu, [0-9]+ threads?, in the column order of "
                                                    "CodeGen-Hybrid"));
  std::smatch single, shared;
  ASSERT_TRUE(std::regex_search(alone.out, single, std::regex("= (\\S+)"))) << alone.out;
  ASSERT_TRUE(std::regex_search(ranks.out, shared, std::regex("= (\\S+)"))) << ranks.out;
  const double expected = std::stod(single[1]);
  EXPECT_NE(expected, 0.0);
  EXPECT_LE(std::abs(std::stod(shared[1]) - expected), 1e-12 * std::abs(expected));
}

// A rank of the cpu target (the CPU kernel's column order) beside one of
// the cuda target (the GPU kernel's) would add up chunks of two different
// cuts of the range: refused before the work.
TEST(PermanentMpi, RanksInDifferentColumnOrdersAreRefused) {
  SKIP_WITHOUT_MPI();
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit (no cuda target)";
  const std::string tcc = "'" + std::string(TCC_EXECUTABLE) + "' run '" + TCC_SOURCE_DIR +
                          "/examples/perm.tc' --in A=" + TCC_SOURCE_DIR + "/examples/data/LF10.mtx";
  Outcome outcome = run(mpirun(1) + tcc + " : -n 1 env TCC_CUDA_DEVICE=none " + tcc + " --target cuda");
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.err, HasSubstr("perm: rank 1 computes a different permanent than rank 0 (rank 0: the float mode"));
}

TEST(PermanentMpi, RanksWithDifferentMatricesAreRefused) {
  SKIP_WITHOUT_MPI();
  auto first = scratch("first.mtx"), second = scratch("second.mtx");
  writeMatrixMarket(randomSparse(16, 0.4, 1), first);
  writeMatrixMarket(randomSparse(16, 0.4, 2), second);
  const std::string tcc = "'" + std::string(TCC_EXECUTABLE) + "' run '" + TCC_SOURCE_DIR + "/examples/perm.tc' --in A=";
  Outcome outcome = run(mpirun(1) + tcc + first.string() + " : -n 1 " + tcc + second.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.err, HasSubstr("perm: rank 1 computes a different permanent than rank 0"));
  std::filesystem::remove(first);
  std::filesystem::remove(second);
}

}  // namespace
}  // namespace tcc::permanent_test
