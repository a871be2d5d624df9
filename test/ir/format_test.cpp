#include "tcc/ir/format.h"

#include <gtest/gtest.h>

using tcc::ir::Format;
using tcc::ir::LevelFormat;

TEST(Format, NamedFormatsHaveTacoLevels) {
  EXPECT_EQ(Format::csr().toString(), "{dense, compressed}");
  EXPECT_EQ(Format::csc().toString(), "{dense, compressed} order (1,0)");
  EXPECT_EQ(Format::coo(3).toString(), "{compressed(nonunique), singleton(nonunique), singleton}");
  EXPECT_EQ(Format::csc().levelOfMode(0), 1);
}

TEST(Format, UnknownNameOrWrongOrderIsRejected) {
  EXPECT_FALSE(Format::named("csr", 3).has_value());
  EXPECT_FALSE(Format::named("blocked", 2).has_value());
  EXPECT_TRUE(Format::named("csf", 4).has_value());
}

TEST(Format, ModeOrderingMustBeAPermutation) {
  EXPECT_THROW(Format({LevelFormat::dense(), LevelFormat::dense()}, {0, 0}), std::invalid_argument);
  EXPECT_THROW(Format({LevelFormat::dense()}, {0, 1}), std::invalid_argument);
}
