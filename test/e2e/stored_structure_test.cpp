// Through the library: a tensor that breaks its format's declared level
// properties is refused when read and when bound to a kernel (it would give
// wrong numbers), and explicitly stored zeros travel from a file through a
// compiled kernel to an output file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>

#include "reference_check.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/tensor_file.h"

namespace tcc::e2e {
namespace {

using ::testing::HasSubstr;

std::filesystem::path scratchFile(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("tcc_structure_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove(path);
  return path;
}

// An order-3 tensor whose (i, j) pairs repeat across k, as a .tns file.
std::filesystem::path pairsRepeatingAcrossK() {
  auto path = scratchFile("repeats.tns");
  std::ofstream(path) << "1 2 1 1.5\n1 2 4 -2.0\n1 3 2 3.0\n3 4 3 0.5\n3 4 5 5.0\n2 1 2 -1.0\n";
  return path;
}

const char* kTtvProgram =
    "tensor B(I, J) : dense\n"
    "tensor A(I, J, K) : FORMAT\n"
    "tensor c(K) : dense\n"
    "B(i, j) = A(i, j, k) * c(k)\n";

Program ttvWith(const std::string& format) {
  std::string text = kTtvProgram;
  text.replace(text.find("FORMAT"), 6, format);
  return Program::fromText(text, "ttv.tc");
}

Tensor vectorOf(int32_t size) {
  rt::Coo coo = rt::Coo::ofShape({size});
  for (int32_t k = 0; k < size; ++k) coo.push(&k, 1.0 + 10.0 * k);
  return rt::pack(coo, rt::TensorFormat::dense(1));
}

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

TEST(DeclaredProperties, RepeatedPairsReadIntoAUniqueMiddleLevelAreRefusedNamingTheFile) {
  auto file = pairsRepeatingAcrossK();
  Format uniqueMiddle({ir::LevelFormat::compressed(false, true), ir::LevelFormat::singleton(true, true),
                       ir::LevelFormat::singleton(true, true)});
  std::string error = errorOf([&] { readTensor(file.string(), uniqueMiddle); });
  EXPECT_THAT(error, HasSubstr(file.string()));
  EXPECT_THAT(error, HasSubstr("level 1 (singleton, mode 2) is declared unique"));
  EXPECT_THAT(error, HasSubstr("position 1 repeats the coordinates (1, 2, *)"));
  // The named COO format (middle level nonunique) reads it and computes right.
  Program coo = ttvWith("coo");
  Tensor a = readTensor(file.string(), coo.syntax().findTensor("A")->format());
  expectMatchesReference(coo, {{"A", a}, {"c", vectorOf(5)}});
  std::filesystem::remove(file);
}

TEST(DeclaredProperties, ABoundTensorThatBreaksAPromiseIsRefusedNamingTheTensor) {
  auto file = pairsRepeatingAcrossK();
  Program coo = ttvWith("coo");
  Tensor a = readTensor(file.string(), coo.syntax().findTensor("A")->format());
  // The same storage with the middle level relabelled unique: a kernel
  // compiled for that format would store B(1,2) twice instead of adding.
  rt::TensorFormat uniqueMiddle = a.format();
  uniqueMiddle.levels[1].unique = true;
  Tensor relabelled(a.dims(), uniqueMiddle, a.valueType());
  for (int level = 0; level < a.order(); ++level) relabelled.levelStorage(level) = a.levelStorage(level);
  relabelled.resizeValues(a.nnz());
  std::memcpy(relabelled.valuesData(), a.valuesData(), a.nnz() * rt::byteWidth(a.valueType()));

  Kernel kernel = compile(ttvWith("{compressed(nonunique), singleton, singleton}"));
  std::string error = errorOf([&] { kernel.run({{"A", relabelled}, {"c", vectorOf(5)}}); });
  EXPECT_THAT(error, HasSubstr("tensor A"));
  EXPECT_THAT(error, HasSubstr("level 1 (singleton, mode 2) is declared unique"));
  EXPECT_THAT(error, HasSubstr("position 1"));
  // Bound to the COO kernel, the relabelled tensor is converted only after
  // its own promises are checked, so it is refused there too.
  Kernel cooKernel = compile(coo);
  EXPECT_THAT(errorOf([&] { cooKernel.run({{"A", relabelled}, {"c", vectorOf(5)}}); }), HasSubstr("tensor A"));
  // Unsorted columns in a CSR input are refused as well.
  Program spmv = Program::fromText(
      "tensor y(I) : dense\ntensor M(I, J) : csr\ntensor x(J) : dense\ny(i) = M(i, j) * x(j)\n", "spmv.tc");
  rt::Coo entries = rt::Coo::ofShape({2, 3});
  int32_t at[][2] = {{0, 0}, {0, 2}, {1, 1}};
  for (auto& coordinate : at) entries.push(coordinate, 2.0);
  Tensor m = rt::pack(entries, rt::TensorFormat::csr());
  std::swap(m.levelStorage(1).crd[0], m.levelStorage(1).crd[1]);
  std::string unsorted = errorOf([&] { compile(spmv).run({{"M", m}, {"x", vectorOf(3)}}); });
  EXPECT_THAT(unsorted, HasSubstr("tensor M"));
  EXPECT_THAT(unsorted, HasSubstr("level 1 (compressed, mode 2) is declared ordered"));
  std::filesystem::remove(file);
}

// fs_183_1 with its own 71 stored zeros and 150 more inserted, seeded
// values elsewhere, written as a mask file.
std::filesystem::path maskWithExplicitZeros(rt::Coo& entries) {
  rt::Coo coo = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/fs_183_1.mtx");
  std::map<std::pair<int32_t, int32_t>, double> cells;
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> value(0.5, 1.5);
  for (size_t k = 0; k < coo.nnz(); ++k)
    cells[{coo.coords[0][k], coo.coords[1][k]}] = coo.values[k] == 0 ? 0.0 : value(random);
  for (int extra = 0; extra < 150; ++extra)
    cells[{static_cast<int32_t>(random() % coo.dims[0]), static_cast<int32_t>(random() % coo.dims[1])}] = 0.0;
  entries = rt::Coo::ofShape(coo.dims);
  for (const auto& [at, v] : cells) {
    int32_t coordinate[2] = {at.first, at.second};
    entries.push(coordinate, v);
  }
  auto path = scratchFile("mask.mtx");
  rt::writeTensorFile(path.string(), entries);
  return path;
}

std::vector<std::pair<int32_t, int32_t>> patternOf(const Tensor& tensor) {
  rt::Coo coo = rt::unpack(tensor);
  std::vector<std::pair<int32_t, int32_t>> pattern;
  for (size_t k = 0; k < coo.nnz(); ++k) pattern.emplace_back(coo.coords[0][k], coo.coords[1][k]);
  std::sort(pattern.begin(), pattern.end());
  return pattern;
}

Tensor denseFactor(int32_t rows, int32_t cols, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> values(static_cast<size_t>(rows) * cols);
  for (double& v : values) v = value(random);
  return rt::fromDense(values, {rows, cols}, rt::TensorFormat::dense(2));
}

TEST(StoredZerosThroughKernels, SddmmWithAMaskFileOfExplicitZerosKeepsTheMaskPattern) {
  rt::Coo entries;
  auto maskFile = maskWithExplicitZeros(entries);
  size_t zeros = std::count(entries.values.begin(), entries.values.end(), 0.0);
  ASSERT_GT(zeros, 71u + 100u);
  Program sddmm = Program::fromText(
      "tensor A(I, J) : csr\ntensor S(I, J) : csr\ntensor C(I, K) : dense\ntensor D(K, J) : dense\n"
      "A(i, j) = S(i, j) * C(i, k) * D(k, j)\n",
      "sddmm.tc");
  Tensor mask = readTensor(maskFile.string(), sddmm.syntax().findTensor("S")->format());
  EXPECT_EQ(mask.nnz(), static_cast<int64_t>(entries.nnz())) << "reading the mask lost stored zeros";
  std::map<std::string, Tensor> inputs = {
      {"S", mask}, {"C", denseFactor(mask.dims()[0], 6, 1)}, {"D", denseFactor(6, mask.dims()[1], 2)}};
  // Values against the dense reference ...
  expectMatchesReference(sddmm, inputs);
  // ... and the structure: exactly the mask's pattern, its zeros included.
  Tensor a = compile(sddmm).run(inputs).at("A");
  EXPECT_EQ(patternOf(a), patternOf(mask));
  EXPECT_EQ(a.nnz(), mask.nnz());
  // Written and read back, the result keeps every stored entry.
  auto outFile = scratchFile("sddmm.mtx");
  writeTensor(outFile.string(), a);
  Tensor back = readTensor(outFile.string(), sddmm.syntax().findTensor("A")->format());
  EXPECT_EQ(back.nnz(), a.nnz());
  EXPECT_EQ(patternOf(back), patternOf(a));
  EXPECT_EQ(rt::toDense(back), rt::toDense(a));
  std::filesystem::remove(maskFile);
  std::filesystem::remove(outFile);
}

TEST(StoredZerosThroughKernels, AProductWrittenToAFileKeepsEveryStoredEntry) {
  Program spgemm = Program::fromText(
      "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n", "spgemm.tc");
  std::string path = std::string(TCC_SHARED_DATA_DIR) + "/matrices/fs_183_1.mtx";
  Tensor b = readTensor(path, Format::csr());
  Tensor a = compile(spgemm).run({{"B", b}, {"C", b}}).at("A");
  auto outFile = scratchFile("product.mtx");
  writeTensor(outFile.string(), a);
  rt::Coo written = rt::readMatrixMarket(outFile.string());
  EXPECT_EQ(static_cast<int64_t>(written.nnz()), a.nnz());
  EXPECT_EQ(rt::toDense(written), rt::toDense(a));
  std::filesystem::remove(outFile);
}

}  // namespace
}  // namespace tcc::e2e
