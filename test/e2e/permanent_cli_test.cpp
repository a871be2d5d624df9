// `tcc run` on p = perm(A): the result against the reference, progress on
// stderr, and Ctrl-C that stops cleanly with a checkpoint a second run
// resumes from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::e2e {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kExamples = std::filesystem::path(TCC_SOURCE_DIR) / "examples";

std::filesystem::path scratch(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("tcc_perm_cli_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove(path);
  return path;
}

std::string contentsOf(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts `tcc ARGS` from the examples folder with stdout and stderr in `log`.
pid_t startTcc(const std::string& arguments, const std::filesystem::path& log) {
  std::string command = "cd '" + kExamples.string() + "' && exec '" + TCC_EXECUTABLE + "' " + arguments + " > '" +
                        log.string() + "' 2>&1";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int exitCodeOf(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Outcome {
  int exitCode;
  std::string output;
};

Outcome runTcc(const std::string& arguments) {
  auto log = scratch("log.txt");
  int code = exitCodeOf(startTcc(arguments, log));
  Outcome outcome{code, contentsOf(log)};
  std::filesystem::remove(log);
  return outcome;
}

double printedScalar(const std::string& output, const std::string& name) {
  auto line = output.find(name + ": ");
  auto equals = output.find(" = ", line);
  if (line == std::string::npos || equals == std::string::npos) return std::nan("");
  return std::stod(output.substr(equals + 3));
}

int doneLines(const std::filesystem::path& checkpoint) {
  std::istringstream lines(contentsOf(checkpoint));
  std::string line;
  int done = 0;
  while (std::getline(lines, line)) done += line.rfind("done ", 0) == 0;
  return done;
}

TEST(PermanentCli, RunsTheExampleAndMatchesTheReference) {
  Outcome outcome = runTcc("run perm.tc --in A=data/LF10.mtx --print p");
  ASSERT_EQ(outcome.exitCode, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("p: {} float64 scalar, 1 stored = "));
  Tensor matrix = readTensor((kExamples / "data/LF10.mtx").string(), Format::csc());
  test::DenseArray dense{{matrix.dims()[0], matrix.dims()[1]}, rt::toDense(matrix)};
  double expected = test::permanent(dense);
  EXPECT_NEAR(printedScalar(outcome.output, "p"), expected, 1e-9 * std::abs(expected));
}

TEST(PermanentCli, ProgressGoesToStderr) {
  auto log = scratch("progress_stdout.txt");
  std::string command = "cd '" + kExamples.string() + "' && '" + TCC_EXECUTABLE +
                        "' run perm_exact.tc --in A=data/LF10_pattern.mtx --progress 2>&1 >'" + log.string() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string stderrText;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) stderrText.append(buffer, read);
  EXPECT_EQ(pclose(pipe), 0) << stderrText;
  EXPECT_THAT(stderrText, HasSubstr("perm: 100.0% (4096/4096 chunks"));
  EXPECT_THAT(stderrText, HasSubstr("it/s, done in"));
  EXPECT_THAT(contentsOf(log), HasSubstr("p: {} int64 scalar, 1 stored = "));
  std::filesystem::remove(log);
}

// The inode of `path`, 0 if there is no such file: a checkpoint is replaced
// by a rename, so a new inode means a run has (re)written it.
ino_t inodeOf(const std::filesystem::path& path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0 ? status.st_ino : 0;
}

TEST(PermanentCli, CtrlCStopsWithACheckpointThatTheNextRunResumes) {
  // A 34 x 34 Erdos-Renyi matrix: 2^33 steps, far more than the test waits.
  auto matrix = scratch("er34.mtx");
  {
    std::mt19937_64 random(34);
    std::uniform_real_distribution<double> coin(0, 1);
    std::ostringstream entries;
    int count = 0;
    for (int column = 1; column <= 34; ++column)
      for (int row = 1; row <= 34; ++row)
        if (row == column || coin(random) < 0.2) {
          entries << row << " " << column << " " << 0.5 + coin(random) << "\n";
          ++count;
        }
    std::ofstream out(matrix);
    out << "%%MatrixMarket matrix coordinate real general\n34 34 " << count << "\n" << entries.str();
  }
  auto checkpoint = scratch("er34.checkpoint");
  auto log = scratch("interrupted.txt");
  int doneAfter[2] = {0, 0};
  for (int attempt = 0; attempt < 2; ++attempt) {
    ino_t before = inodeOf(checkpoint);
    pid_t pid = startTcc("run perm.tc --in A=" + matrix.string() + " --checkpoint " + checkpoint.string(), log);
    // The run writes its checkpoint once Ctrl-C is handled, before any work.
    for (int wait = 0; wait < 600 && inodeOf(checkpoint) == before; ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    kill(pid, SIGINT);
    int code = exitCodeOf(pid);
    std::string output = contentsOf(log);
    EXPECT_NE(code, 0) << output;
    EXPECT_THAT(output, HasSubstr("perm: interrupted after"));
    EXPECT_THAT(output, HasSubstr("checkpoint saved to " + checkpoint.string()));
    EXPECT_THAT(contentsOf(checkpoint), HasSubstr("tcc-permanent-checkpoint 1\n"));
    doneAfter[attempt] = doneLines(checkpoint);
  }
  EXPECT_GT(doneAfter[0], 0);
  EXPECT_GT(doneAfter[1], doneAfter[0]);  // the second run kept the first one's chunks

  // The checkpoint of another matrix is refused, and names the file.
  Outcome other = runTcc("run perm.tc --in A=data/LF10.mtx --checkpoint " + checkpoint.string());
  EXPECT_NE(other.exitCode, 0);
  EXPECT_THAT(other.output, HasSubstr("checkpoint " + checkpoint.string() + " belongs to another computation"));
  for (const auto& path : {matrix, checkpoint, log}) std::filesystem::remove(path);
}

}  // namespace
}  // namespace tcc::e2e
