// SPDX-License-Identifier: Apache-2.0
// The ethtool netlink messages byte by byte: the requests rocenet sends,
// and replies as the kernel lays them out (linux/ethtool_netlink.h) with
// what no driver here gives: a link-down reason and its substate, the
// PHY's down count, and FEC statistics of two lanes.
#include "daemon/os/linux/ethtool_message.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

std::string Attr(uint16_t type, const std::string& payload) {
  nlattr attr{};
  attr.nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  attr.nla_type = type;
  std::string out(reinterpret_cast<const char*>(&attr), sizeof(attr));
  out += payload;
  out.append(NLA_ALIGN(payload.size()) - payload.size(), '\0');
  return out;
}

template <typename T>
std::string Raw(T value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(value));
}

std::string Reply(uint16_t family, uint8_t command, const std::string& attrs, uint32_t seq = 7) {
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + GENL_HDRLEN + attrs.size());
  header.nlmsg_type = family;
  header.nlmsg_seq = seq;
  genlmsghdr genl{};
  genl.cmd = command;
  genl.version = ETHTOOL_GENL_VERSION;
  return Raw(header) + Raw(genl) + attrs;
}

EthtoolReply Parse(const std::string& bytes) {
  size_t length = 0;
  absl::StatusOr<EthtoolReply> reply = ParseEthtoolMessage(bytes, &length);
  EXPECT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(length, bytes.size());
  return reply.ok() ? *reply : EthtoolReply{};
}

TEST(EthtoolMessageTest, RequestsNameTheDeviceAndAskForStatisticsWhereNeeded) {
  const std::string family = BuildGetEthtoolFamily(3);
  nlmsghdr header;
  std::memcpy(&header, family.data(), sizeof(header));
  EXPECT_EQ(header.nlmsg_type, GENL_ID_CTRL);
  EXPECT_EQ(header.nlmsg_len, family.size());
  EXPECT_EQ(header.nlmsg_seq, 3u);
  EXPECT_THAT(family, HasSubstr(std::string("ethtool\0", 8)));

  const std::string link = BuildLinkStateGet(29, "so0", 4);
  std::memcpy(&header, link.data(), sizeof(header));
  EXPECT_EQ(header.nlmsg_type, 29);
  EXPECT_EQ(header.nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(static_cast<uint8_t>(link[NLMSG_HDRLEN]), ETHTOOL_MSG_LINKSTATE_GET);
  // The header nest holds only the name.
  EXPECT_EQ(link.substr(NLMSG_HDRLEN + GENL_HDRLEN),
            Attr(ETHTOOL_A_LINKSTATE_HEADER | NLA_F_NESTED,
                 Attr(ETHTOOL_A_HEADER_DEV_NAME, std::string("so0\0", 4))));
  const std::string fec = BuildFecGet(29, "so0", 5);
  EXPECT_EQ(static_cast<uint8_t>(fec[NLMSG_HDRLEN]), ETHTOOL_MSG_FEC_GET);
  EXPECT_EQ(fec.substr(NLMSG_HDRLEN + GENL_HDRLEN),
            Attr(ETHTOOL_A_FEC_HEADER | NLA_F_NESTED,
                 Attr(ETHTOOL_A_HEADER_DEV_NAME, std::string("so0\0", 4)) +
                     Attr(ETHTOOL_A_HEADER_FLAGS, Raw<uint32_t>(ETHTOOL_FLAG_STATS))));
}

TEST(EthtoolMessageTest, TheFamilyIdFromTheController) {
  const EthtoolReply reply = Parse(Reply(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY,
                                         Attr(CTRL_ATTR_FAMILY_NAME, std::string("ethtool\0", 8)) +
                                             Attr(CTRL_ATTR_FAMILY_ID, Raw<uint16_t>(29))));
  EXPECT_EQ(reply.family, 29);
}

TEST(EthtoolMessageTest, ALinkDownWithItsReasonDetailAndDownCount) {
  const EthtoolReply reply =
      Parse(Reply(29, ETHTOOL_MSG_LINKSTATE_GET_REPLY,
                  Attr(ETHTOOL_A_LINKSTATE_HEADER | NLA_F_NESTED,
                       Attr(ETHTOOL_A_HEADER_DEV_NAME, std::string("so0\0", 4))) +
                      Attr(ETHTOOL_A_LINKSTATE_LINK, Raw<uint8_t>(0)) +
                      Attr(ETHTOOL_A_LINKSTATE_EXT_STATE,
                           Raw<uint8_t>(ETHTOOL_LINK_EXT_STATE_LINK_TRAINING_FAILURE)) +
                      Attr(ETHTOOL_A_LINKSTATE_EXT_SUBSTATE,
                           Raw<uint8_t>(ETHTOOL_LINK_EXT_SUBSTATE_LT_KR_FRAME_LOCK_NOT_ACQUIRED)) +
                      Attr(ETHTOOL_A_LINKSTATE_EXT_SUBSTATE + 1, Raw<uint32_t>(12))));
  ASSERT_TRUE(reply.link_state.has_value());
  EXPECT_EQ(*reply.link_state, (LinkState{.link = false,
                                          .down_reason = "LINK_TRAINING_FAILURE",
                                          .down_detail = "KR_FRAME_LOCK_NOT_ACQUIRED",
                                          .down_count = 12}));
}

TEST(EthtoolMessageTest, ALinkUpSaysNoReason) {
  const EthtoolReply reply = Parse(
      Reply(29, ETHTOOL_MSG_LINKSTATE_GET_REPLY, Attr(ETHTOOL_A_LINKSTATE_LINK, Raw<uint8_t>(1))));
  EXPECT_EQ(*reply.link_state, (LinkState{.link = true}));
}

TEST(EthtoolMessageTest, FecStatisticsAreTheTotalsBeforeTheLanes) {
  // Each statistic: the total, then one value a lane.
  const std::string stats =
      Attr(ETHTOOL_A_FEC_STAT_CORRECTED,
           Raw<uint64_t>(1500) + Raw<uint64_t>(700) + Raw<uint64_t>(800)) +
      Attr(ETHTOOL_A_FEC_STAT_UNCORR, Raw<uint64_t>(3) + Raw<uint64_t>(1) + Raw<uint64_t>(2));
  const EthtoolReply reply = Parse(Reply(
      29, ETHTOOL_MSG_FEC_GET_REPLY,
      Attr(ETHTOOL_A_FEC_AUTO, Raw<uint8_t>(0)) + Attr(ETHTOOL_A_FEC_STATS | NLA_F_NESTED, stats)));
  ASSERT_TRUE(reply.fec.has_value());
  EXPECT_EQ(*reply.fec, (FecStats{.corrected_blocks = 1500, .uncorrectable_blocks = 3}));
}

TEST(EthtoolMessageTest, AnErrorAndBrokenMessages) {
  nlmsghdr header{};
  header.nlmsg_len = NLMSG_HDRLEN + sizeof(nlmsgerr);
  header.nlmsg_type = NLMSG_ERROR;
  header.nlmsg_seq = 9;
  nlmsgerr error{};
  error.error = -EOPNOTSUPP;
  const EthtoolReply reply = Parse(Raw(header) + Raw(error));
  EXPECT_EQ(reply.error, EOPNOTSUPP);
  EXPECT_EQ(reply.seq, 9u);

  size_t length = 0;
  EXPECT_EQ(ParseEthtoolMessage("short", &length).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string overlong =
      Reply(29, ETHTOOL_MSG_LINKSTATE_GET_REPLY, Attr(ETHTOOL_A_LINKSTATE_LINK, Raw<uint8_t>(1)));
  overlong[NLMSG_HDRLEN + GENL_HDRLEN] = 40;  // the attribute claims 40 bytes
  EXPECT_EQ(ParseEthtoolMessage(overlong, &length).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EthtoolMessageTest, AModuleEepromPageIsAskedForAndItsBytesRead) {
  const std::string request = BuildModuleEepromGet(29, "so0", 0x11, 0, 128, 128, 6);
  EXPECT_EQ(static_cast<uint8_t>(request[NLMSG_HDRLEN]), ETHTOOL_MSG_MODULE_EEPROM_GET);
  EXPECT_EQ(request.substr(NLMSG_HDRLEN + GENL_HDRLEN),
            Attr(ETHTOOL_A_MODULE_EEPROM_HEADER | NLA_F_NESTED,
                 Attr(ETHTOOL_A_HEADER_DEV_NAME, std::string("so0\0", 4))) +
                Attr(ETHTOOL_A_MODULE_EEPROM_OFFSET, Raw<uint32_t>(128)) +
                Attr(ETHTOOL_A_MODULE_EEPROM_LENGTH, Raw<uint32_t>(128)) +
                Attr(ETHTOOL_A_MODULE_EEPROM_PAGE, Raw<uint8_t>(0x11)) +
                Attr(ETHTOOL_A_MODULE_EEPROM_BANK, Raw<uint8_t>(0)) +
                Attr(ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, Raw<uint8_t>(0x50)));
  const std::string page(128, '\x5a');
  const EthtoolReply reply = Parse(
      Reply(29, ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, Attr(ETHTOOL_A_MODULE_EEPROM_DATA, page)));
  EXPECT_EQ(reply.eeprom, page);
}

TEST(EthtoolMessageTest, StateNames) {
  EXPECT_EQ(LinkExtStateName(ETHTOOL_LINK_EXT_STATE_NO_CABLE), "NO_CABLE");
  EXPECT_EQ(LinkExtStateName(ETHTOOL_LINK_EXT_STATE_MODULE), "MODULE");
  EXPECT_EQ(LinkExtStateName(40), "STATE_40");
  EXPECT_EQ(LinkExtSubstateName(ETHTOOL_LINK_EXT_STATE_BAD_SIGNAL_INTEGRITY,
                                ETHTOOL_LINK_EXT_SUBSTATE_BSI_SERDES_ALOS),
            "SERDES_ALOS");
  EXPECT_EQ(LinkExtSubstateName(ETHTOOL_LINK_EXT_STATE_NO_CABLE, 0), "");
  EXPECT_EQ(LinkExtSubstateName(ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE, 9), "SUBSTATE_9");
}

}  // namespace
}  // namespace rocenet::os
