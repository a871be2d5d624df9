// Stopping a permanent and resuming it from its checkpoint gives the same
// result, to the bit, as a run that was never stopped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "permanent_test_support.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;

class PermanentCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tcc_permanent_checkpoint_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  rt::PermanentOptions stopAfter(int64_t chunks, int threads) const {
    rt::PermanentOptions options;
    options.checkpointPath = path_.string();
    options.chunkLimit = chunks;
    options.threads = threads;
    options.progress = rt::ProgressMode::Off;
    return options;
  }

  int completedChunksInFile() const {
    std::ifstream in(path_);
    std::string line;
    int done = 0;
    while (std::getline(in, line)) done += line.rfind("done ", 0) == 0;
    return done;
  }

  std::filesystem::path path_;
};

TEST_F(PermanentCheckpoint, ResumedFloatRunEqualsAnUninterruptedOne) {
  rt::Tensor matrix = toTensor(randomSparse(20, 0.35, 3), rt::TensorFormat::csc());
  const double uninterrupted = floatPermanent(matrix);

  EXPECT_THROW(
      {
        try {
          floatPermanent(matrix, stopAfter(1000, 1));
        } catch (const std::runtime_error& error) {
          EXPECT_THAT(error.what(), HasSubstr("stopped at the chunk limit after 1000 of 4096 chunks"));
          EXPECT_THAT(error.what(), HasSubstr("checkpoint saved to"));
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(completedChunksInFile(), 1000);
  EXPECT_THROW(floatPermanent(matrix, stopAfter(1500, 2)), std::runtime_error);  // resumes, stops again
  EXPECT_GE(completedChunksInFile(), 2500);
  EXPECT_EQ(floatPermanent(matrix, stopAfter(0, 2)), uninterrupted);
  EXPECT_EQ(completedChunksInFile(), 4096);
  // A finished checkpoint answers at once, with the same bits.
  EXPECT_EQ(floatPermanent(matrix, stopAfter(1, 1)), uninterrupted);
}

TEST_F(PermanentCheckpoint, ResumedExactRunEqualsAnUninterruptedOne) {
  rt::Tensor matrix = toTensor(randomPattern(20, 0.3, 4), rt::TensorFormat::csr());
  const int64_t uninterrupted = exactPermanent(matrix);
  EXPECT_THROW(exactPermanent(matrix, stopAfter(700, 2)), std::runtime_error);
  EXPECT_GE(completedChunksInFile(), 700);
  EXPECT_EQ(exactPermanent(matrix, stopAfter(0, 1)), uninterrupted);
}

TEST_F(PermanentCheckpoint, ACheckpointOfAnotherMatrixIsRefused) {
  rt::Tensor first = toTensor(randomSparse(16, 0.4, 5), rt::TensorFormat::csc());
  rt::Tensor second = toTensor(randomSparse(16, 0.4, 6), rt::TensorFormat::csc());
  EXPECT_THROW(floatPermanent(first, stopAfter(10, 1)), std::runtime_error);
  try {
    floatPermanent(second, stopAfter(0, 1));
    ADD_FAILURE() << "a checkpoint of another matrix was used";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("belongs to another computation"));
  }
  // Nor is a float checkpoint used for the exact permanent of the same matrix.
  rt::Tensor pattern = toTensor(randomPattern(16, 0.4, 7), rt::TensorFormat::csc());
  std::filesystem::remove(path_);
  EXPECT_THROW(floatPermanent(pattern, stopAfter(10, 1)), std::runtime_error);
  EXPECT_THROW(exactPermanent(pattern, stopAfter(0, 1)), std::runtime_error);
}

TEST_F(PermanentCheckpoint, AnUnwritablePathFailsBeforeTheWork) {
  rt::PermanentOptions options = stopAfter(0, 1);
  options.checkpointPath = (path_ / "no-such-folder" / "checkpoint").string();
  rt::Tensor matrix = toTensor(randomSparse(12, 0.5, 9), rt::TensorFormat::csc());
  try {
    floatPermanent(matrix, options);
    ADD_FAILURE() << "a checkpoint in a missing folder was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot write checkpoint " + options.checkpointPath));
  }
}

TEST_F(PermanentCheckpoint, AMalformedCheckpointNamesItsLine) {
  {
    std::ofstream out(path_);
    out << "tcc-permanent-checkpoint 1\nmatrix 00ff\nmode float\nchunks 4096\ndone 12 0x1p+3\ndone 9999 1\n";
  }
  rt::Tensor matrix = toTensor(randomSparse(20, 0.3, 8), rt::TensorFormat::csc());
  try {
    floatPermanent(matrix, stopAfter(0, 1));
    ADD_FAILURE() << "a malformed checkpoint was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(":6: expected 'done CHUNK PARTIAL' with CHUNK below 4096"));
  }
}

}  // namespace
}  // namespace tcc::permanent_test
