// SPDX-License-Identifier: Apache-2.0
#include "daemon/qos/pfc.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::qos {
namespace {

using ::testing::HasSubstr;
using Kind = PfcRequest::Kind;

TEST(PfcRequestTest, ParsesEveryForm) {
  EXPECT_EQ(ParsePfcRequest("keep")->kind, Kind::kKeep);
  EXPECT_EQ(ParsePfcRequest("none")->kind, Kind::kNone);
  EXPECT_EQ(ParsePfcRequest(" all ")->kind, Kind::kAll);
  EXPECT_EQ(*ParsePfcRequest("0-3"), (PfcRequest{Kind::kPriorities, 0x0f}));
  EXPECT_EQ(*ParsePfcRequest("0,1,2,3"), (PfcRequest{Kind::kPriorities, 0x0f}));
  EXPECT_EQ(*ParsePfcRequest("3"), (PfcRequest{Kind::kPriorities, 0x08}));
  EXPECT_EQ(*ParsePfcRequest("0, 2-3,7"), (PfcRequest{Kind::kPriorities, 0x8d}));
}

TEST(PfcRequestTest, RefusesWhatIsNoPriority) {
  for (const char* bad : {"", "8", "-1", "3-1", "a", "0-", "1,,2", "off"}) {
    absl::StatusOr<PfcRequest> request = ParsePfcRequest(bad);
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(request.status().message(), HasSubstr("use keep, none, all")) << bad;
  }
  EXPECT_THAT(ParsePfcRequest("8").status().message(),
              HasSubstr("\"8\" is not within priorities 0..7"));
}

TEST(PfcRequestTest, FormatsAsItParses) {
  for (const char* text : {"keep", "none", "all", "0-3", "3", "0,2-3,7"}) {
    EXPECT_EQ(FormatPfcRequest(*ParsePfcRequest(text)), text);
  }
  EXPECT_EQ(FormatPriorities(0), "none");
  EXPECT_EQ(FormatPriorities(0xff), "0-7");
}

TEST(ResolvePfcTest, GaudiTakesAllOfItsFourPrioritiesOrNone) {
  const PfcPortRule gaudi{.gaudi = true, .capability = 4};
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("all"), "so0", gaudi), 0x0f);
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("0-3"), "so0", gaudi), 0x0f);
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("none"), "so0", gaudi), 0);
  EXPECT_EQ(*ResolvePfc(PfcRequest{}, "so0", gaudi), std::nullopt);
  for (const char* bad : {"3", "0-2", "0-4", "4-7"}) {
    absl::StatusOr<std::optional<uint8_t>> refused =
        ResolvePfc(*ParsePfcRequest(bad), "so0", gaudi);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.status().message(),
                HasSubstr("port so0: a Gaudi port (hbl_en) takes PFC on all of priorities 0-3 or "
                          "on none, not on"));
  }
}

TEST(ResolvePfcTest, OtherDriversTakeUpToTheirCapability) {
  const PfcPortRule eight{.gaudi = false, .capability = 8};
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("all"), "eth1", eight), 0xff);
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("3"), "eth1", eight), 0x08);
  const PfcPortRule two{.gaudi = false, .capability = 2};
  EXPECT_EQ(*ResolvePfc(*ParsePfcRequest("3-4"), "eth1", two), 0x18);
  EXPECT_THAT(ResolvePfc(*ParsePfcRequest("3-5"), "eth1", two).status().message(),
              HasSubstr("port eth1: PFC on 3 priorities (3-5) but the port takes at most 2 at "
                        "once (pfc_cap)"));
  EXPECT_THAT(ResolvePfc(*ParsePfcRequest("all"), "eth1", two).status().message(),
              HasSubstr("list the priorities instead"));
}

}  // namespace
}  // namespace rocenet::qos
