// The C facade: the same results as the template core, arrays the caller
// frees, and errors instead of crashes on bad arguments.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "reference.h"
#include "tcc/ism/c_api.h"
#include "tcc/ism/c_api_impl.h"

namespace {

using tcc::ism::testing::Duplication;

TEST(CApi, BuildsCscThatMatchesTheReference) {
  auto stream = tcc::ism::testing::randomStream<2>(20000, Duplication::Light, 11, true);
  auto reference = tcc::ism::testing::referenceOf(stream);
  for (int policy = TCC_ISM_BUCKET; policy <= TCC_ISM_VECTOR; ++policy) {
    for (int flags : {0, TCC_ISM_PIPELINE | TCC_ISM_DOUBLE_BUFFER}) {
      SCOPED_TRACE("policy " + std::to_string(policy) + " flags " + std::to_string(flags));
      int levelOrder[2] = {1, 0};
      tcc_ism_workspace* w =
          tcc_ism_create(2, stream.shape.modeDims.data(), levelOrder, policy, flags, 512, 4096);
      ASSERT_NE(w, nullptr) << tcc_ism_last_error();
      for (std::size_t k = 0; k < stream.values.size(); ++k) {
        ASSERT_EQ(tcc_ism_insert(w, stream.coordinates[k].data(), stream.values[k]), 0);
      }
      int kinds[2] = {0, 1}, unique[2] = {1, 1};
      tcc_ism_level_arrays levels[2];
      double* vals = nullptr;
      long long valsSize = 0;
      ASSERT_EQ(tcc_ism_finish(w, kinds, unique, levels, &vals, &valsSize), 0) << tcc_ism_last_error();
      EXPECT_EQ(tcc_ism_size(w), static_cast<long long>(reference.size()));
      EXPECT_EQ(levels[0].pos, nullptr);
      ASSERT_EQ(levels[1].pos_size, stream.shape.levelDim(0) + 1);
      ASSERT_EQ(valsSize, static_cast<long long>(reference.size()));
      auto it = reference.begin();
      for (int col = 0; col < stream.shape.levelDim(0); ++col) {
        for (long long p = levels[1].pos[col]; p < levels[1].pos[col + 1]; ++p, ++it) {
          ASSERT_EQ(it->first[0], col);
          ASSERT_EQ(it->first[1], levels[1].crd[p]);
          ASSERT_TRUE(tcc::ism::testing::closeEnough(vals[p], it->second));
        }
      }
      EXPECT_EQ(it, reference.end());
      EXPECT_NE(tcc_ism_finish(w, kinds, unique, levels, &vals, &valsSize), 0);
      std::free(levels[1].pos);
      std::free(levels[1].crd);
      std::free(vals);
      tcc_ism_destroy(w);
    }
  }
}

TEST(CApi, ReportsBadArguments) {
  int dims[5] = {4, 4, 4, 4, 4};
  EXPECT_EQ(tcc_ism_create(5, dims, nullptr, TCC_ISM_HASH, 0, 0, 0), nullptr);
  EXPECT_NE(std::string(tcc_ism_last_error()).find("order"), std::string::npos);
  EXPECT_EQ(tcc_ism_create(2, dims, nullptr, 9, 0, 0, 0), nullptr);
  EXPECT_NE(std::string(tcc_ism_last_error()).find("policy"), std::string::npos);
  int badOrder[2] = {0, 0};
  EXPECT_EQ(tcc_ism_create(2, dims, badOrder, TCC_ISM_HASH, 0, 0, 0), nullptr);
  int badDims[2] = {4, -1};
  EXPECT_EQ(tcc_ism_create(2, badDims, nullptr, TCC_ISM_HASH, 0, 0, 0), nullptr);

  tcc_ism_workspace* w = tcc_ism_create(2, dims, nullptr, TCC_ISM_BUCKET, 0, 0, 0);
  ASSERT_NE(w, nullptr);
  int outside[2] = {4, 0};
  EXPECT_NE(tcc_ism_insert(w, outside, 1.0), 0);
  EXPECT_NE(std::string(tcc_ism_last_error()).find("outside"), std::string::npos);
  int inside[2] = {1, 2};
  EXPECT_EQ(tcc_ism_insert(w, inside, 1.0), 0);
  int singletonFirst[2] = {2, 1}, unique[2] = {1, 1};
  tcc_ism_level_arrays levels[2];
  double* vals = nullptr;
  long long valsSize = 0;
  EXPECT_NE(tcc_ism_finish(w, singletonFirst, unique, levels, &vals, &valsSize), 0);
  EXPECT_NE(std::string(tcc_ism_last_error()).find("singleton"), std::string::npos);
  int badKind[2] = {7, 1};
  EXPECT_NE(tcc_ism_finish(w, badKind, unique, levels, &vals, &valsSize), 0);
  int coo[2] = {1, 2}, cooUnique[2] = {0, 1};
  ASSERT_EQ(tcc_ism_finish(w, coo, cooUnique, levels, &vals, &valsSize), 0) << tcc_ism_last_error();
  EXPECT_EQ(valsSize, 1);
  EXPECT_EQ(levels[0].crd[0], 1);
  EXPECT_EQ(levels[1].crd[0], 2);
  std::free(levels[0].pos);
  std::free(levels[0].crd);
  std::free(levels[1].crd);
  std::free(vals);
  tcc_ism_destroy(w);
}

}  // namespace
