// SPDX-License-Identifier: Apache-2.0
// JudgeRdmaLinks on rings written out link by link.
#include "daemon/diag/rdma_verdict.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

RdmaLink Link(const std::string& from, const std::string& to, const std::string& error = "",
              const std::string& skipped = "") {
  RdmaLink link;
  link.rail = "0";
  link.from_node = from;
  link.from_port = "so0";
  link.to_node = to;
  link.to_port = "so0";
  link.error = error;
  link.skipped = skipped;
  link.bits_per_second = error.empty() && skipped.empty() ? 90e9 : 0;
  return link;
}

std::vector<std::string> Names(const RdmaFindings& f) {
  std::vector<std::string> out;
  for (const Suspect& s : f.suspects) out.push_back(s.node);
  return out;
}

TEST(JudgeRdmaLinksTest, TheCommonEndOfTwoFailedLinksIsTheSuspect) {
  const RdmaFindings f = JudgeRdmaLinks(
      {"a", "b", "c", "d"}, {"0"},
      {Link("a", "b"), Link("b", "c", "refused"), Link("c", "d", "timed out"), Link("d", "a")});
  EXPECT_THAT(Names(f), ElementsAre("c"));
  EXPECT_THAT(f.suspects[0].evidence, ::testing::HasSubstr("both of its links of rail 0"));
  EXPECT_THAT(f.unmeasured, IsEmpty());
}

TEST(JudgeRdmaLinksTest, ALoneFailedLinkLeavesBothEndsInDoubt) {
  const RdmaFindings f = JudgeRdmaLinks(
      {"a", "b", "c"}, {"0"}, {Link("a", "b"), Link("b", "c", "refused"), Link("c", "a")});
  EXPECT_THAT(Names(f), ElementsAre("b", "c"));
}

TEST(JudgeRdmaLinksTest, ANodeWithNoMeasuredLinkOfARailIsNotMeasured) {
  const RdmaFindings f =
      JudgeRdmaLinks({"a", "b", "c"}, {"0"},
                     {Link("a", "b", "", "a: no RDMA device on so0"), Link("b", "c"),
                      Link("c", "a", "", "a: no RDMA device on so0")});
  ASSERT_EQ(f.unmeasured.size(), 1u);
  EXPECT_EQ(f.unmeasured[0].node, "a");
  EXPECT_EQ(f.unmeasured[0].reason, "a: no RDMA device on so0");
  EXPECT_THAT(f.suspects, IsEmpty());
}

}  // namespace
}  // namespace rocenet::diag
