// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/suggest.h"

#include "gtest/gtest.h"

namespace rocenet {
namespace {

const std::vector<std::string> kCommands = {"ports",     "neighbors",   "addressing", "health",
                                            "reconcile", "attachments", "topology",   "wait"};

TEST(ClosestMatchTest, TyposPluralsAndPrefixes) {
  EXPECT_EQ(ClosestMatch("port", kCommands), "ports");
  EXPECT_EQ(ClosestMatch("neighbours", kCommands), "neighbors");
  EXPECT_EQ(ClosestMatch("helth", kCommands), "health");
  EXPECT_EQ(ClosestMatch("HEALTH", kCommands), "health");
  EXPECT_EQ(ClosestMatch("topo", kCommands), "topology");
  EXPECT_EQ(ClosestMatch("adressing", kCommands), "addressing");
  EXPECT_EQ(ClosestMatch("reconcile", kCommands), "reconcile");
}

TEST(ClosestMatchTest, NothingCloseIsNothing) {
  EXPECT_EQ(ClosestMatch("frobnicate", kCommands), "");
  EXPECT_EQ(ClosestMatch("", kCommands), "");
  EXPECT_EQ(ClosestMatch("xy", kCommands), "");
  EXPECT_EQ(ClosestMatch("ports", {}), "");
}

TEST(DidYouMeanTest, Phrase) {
  EXPECT_EQ(DidYouMean("timout", {"timeout", "socket"}, "--"), "; did you mean \"--timeout\"?");
  EXPECT_EQ(DidYouMean("zzz", {"timeout"}), "");
}

}  // namespace
}  // namespace rocenet
