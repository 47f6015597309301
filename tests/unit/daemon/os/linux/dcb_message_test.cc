// SPDX-License-Identifier: Apache-2.0
// The dcbnl messages against the kernel's ABI: every request is taken apart
// with the kernel's own structs and constants (linux/dcbnl.h,
// linux/rtnetlink.h), and replies are built the way net/dcb/dcbnl.c builds
// them, then parsed.
#include "daemon/os/linux/dcb_message.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

// The attributes of a message body (after struct dcbmsg), by type.
std::map<int, std::string> Attributes(const std::string& bytes) {
  std::map<int, std::string> out;
  size_t at = 0;
  while (at + NLA_HDRLEN <= bytes.size()) {
    nlattr header;
    std::memcpy(&header, bytes.data() + at, sizeof(header));
    if (header.nla_len < NLA_HDRLEN || at + header.nla_len > bytes.size()) break;
    out[header.nla_type] = bytes.substr(at + NLA_HDRLEN, header.nla_len - NLA_HDRLEN);
    at += NLA_ALIGN(header.nla_len);
  }
  return out;
}

struct Request {
  nlmsghdr header;
  dcbmsg body;
  std::map<int, std::string> attributes;
};

Request Split(const std::string& message) {
  Request out;
  EXPECT_GE(message.size(), NLMSG_HDRLEN + sizeof(dcbmsg));
  std::memcpy(&out.header, message.data(), sizeof(out.header));
  EXPECT_EQ(out.header.nlmsg_len, message.size());
  std::memcpy(&out.body, message.data() + NLMSG_HDRLEN, sizeof(out.body));
  out.attributes = Attributes(message.substr(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg))));
  return out;
}

void Put(std::string& out, uint16_t type, const void* data, size_t length) {
  nlattr header{.nla_len = static_cast<uint16_t>(NLA_HDRLEN + length), .nla_type = type};
  const size_t at = out.size();
  out.resize(at + NLA_ALIGN(header.nla_len), '\0');
  std::memcpy(out.data() + at, &header, sizeof(header));
  std::memcpy(out.data() + at + NLA_HDRLEN, data, length);
}

// A reply as dcbnl_newmsg() and a command's fill function make it.
std::string Reply(uint16_t type, uint8_t command, const std::string& attributes, uint32_t seq) {
  std::string message(NLMSG_HDRLEN, '\0');
  dcbmsg body{.dcb_family = AF_UNSPEC, .cmd = command, .dcb_pad = 0};
  message.append(reinterpret_cast<const char*>(&body), sizeof(body));
  message += attributes;
  nlmsghdr header{.nlmsg_len = static_cast<uint32_t>(message.size()),
                  .nlmsg_type = type,
                  .nlmsg_flags = 0,
                  .nlmsg_seq = seq,
                  .nlmsg_pid = 0};
  std::memcpy(message.data(), &header, sizeof(header));
  return message;
}

TEST(DcbMessageTest, TheKernelsNumbers) {
  // rtnetlink.h and dcbnl.h as of every kernel since dcbnl's IEEE mode.
  EXPECT_EQ(RTM_GETDCB, 78);
  EXPECT_EQ(RTM_SETDCB, 79);
  EXPECT_EQ(DCB_CMD_IEEE_SET, 20);
  EXPECT_EQ(DCB_CMD_IEEE_GET, 21);
  EXPECT_EQ(DCB_CMD_GDCBX, 22);
  EXPECT_EQ(DCB_CMD_SDCBX, 23);
  EXPECT_EQ(DCB_ATTR_IFNAME, 1);
  EXPECT_EQ(DCB_ATTR_IEEE, 13);
  EXPECT_EQ(DCB_ATTR_DCBX, 14);
  EXPECT_EQ(DCB_ATTR_IEEE_PFC, 2);
  EXPECT_EQ(sizeof(ieee_pfc), 136u);
  EXPECT_EQ(offsetof(ieee_pfc, pfc_en), 1u);
  EXPECT_EQ(offsetof(ieee_pfc, requests), 8u);
  EXPECT_EQ(offsetof(ieee_pfc, indications), 72u);
  EXPECT_EQ(HostIeeeDcbxMode(), DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
}

TEST(DcbMessageTest, IeeeGetNamesTheDeviceWithItsNul) {
  const Request r = Split(BuildIeeeGet("so0", 7));
  EXPECT_EQ(r.header.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(r.header.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(r.header.nlmsg_seq, 7u);
  EXPECT_EQ(r.body.dcb_family, AF_UNSPEC);
  EXPECT_EQ(r.body.cmd, DCB_CMD_IEEE_GET);
  ASSERT_EQ(r.attributes.size(), 1u);
  // The kernel's policy is NLA_NUL_STRING.
  EXPECT_EQ(r.attributes.at(DCB_ATTR_IFNAME), std::string("so0\0", 4));
}

TEST(DcbMessageTest, IeeeSetCarriesOneStructIeeePfcInTheIeeeNest) {
  PfcSettings pfc;
  pfc.capability = 4;
  pfc.enabled = 0x0f;
  pfc.requests[1] = 99;  // counters are the driver's; never sent
  const Request r = Split(BuildIeeeSetPfc("so1", pfc, 8));
  EXPECT_EQ(r.header.nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(r.body.cmd, DCB_CMD_IEEE_SET);
  EXPECT_EQ(r.attributes.at(DCB_ATTR_IFNAME), std::string("so1\0", 4));
  ASSERT_TRUE(r.attributes.count(DCB_ATTR_IEEE | NLA_F_NESTED));
  const std::map<int, std::string> ieee = Attributes(r.attributes.at(DCB_ATTR_IEEE | NLA_F_NESTED));
  ASSERT_EQ(ieee.size(), 1u);
  const std::string& payload = ieee.at(DCB_ATTR_IEEE_PFC);
  ASSERT_EQ(payload.size(), sizeof(ieee_pfc));
  ieee_pfc sent;
  std::memcpy(&sent, payload.data(), sizeof(sent));
  EXPECT_EQ(sent.pfc_cap, 4);
  EXPECT_EQ(sent.pfc_en, 0x0f);
  EXPECT_EQ(sent.requests[1], 0u);
}

TEST(DcbMessageTest, DcbxRequests) {
  const Request get = Split(BuildGetDcbx("so0", 1));
  EXPECT_EQ(get.header.nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(get.body.cmd, DCB_CMD_GDCBX);
  const Request set = Split(BuildSetDcbx("so0", HostIeeeDcbxMode(), 2));
  EXPECT_EQ(set.header.nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(set.body.cmd, DCB_CMD_SDCBX);
  EXPECT_EQ(set.attributes.at(DCB_ATTR_DCBX),
            std::string(1, static_cast<char>(DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE)));
}

TEST(DcbMessageTest, ParsesTheIeeeGetReplyOfADriver) {
  ieee_pfc pfc;
  std::memset(&pfc, 0, sizeof(pfc));
  pfc.pfc_cap = 4;
  pfc.pfc_en = 0x0f;
  pfc.requests[3] = 12;
  pfc.indications[3] = 34;
  std::string nest;
  ieee_ets ets;
  std::memset(&ets, 0, sizeof(ets));
  Put(nest, DCB_ATTR_IEEE_ETS, &ets, sizeof(ets));  // other settings come first
  Put(nest, DCB_ATTR_IEEE_PFC, &pfc, sizeof(pfc));
  std::string attributes;
  Put(attributes, DCB_ATTR_IFNAME, "so0", 4);
  Put(attributes, DCB_ATTR_IEEE | NLA_F_NESTED, nest.data(), nest.size());
  const uint8_t mode = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
  Put(attributes, DCB_ATTR_DCBX, &mode, 1);
  const std::string message = Reply(RTM_GETDCB, DCB_CMD_IEEE_GET, attributes, 5);
  size_t length = 0;
  absl::StatusOr<DcbReply> reply = ParseDcbMessage(message + "trailing", &length);
  ASSERT_OK(reply);
  EXPECT_EQ(length, message.size());
  EXPECT_EQ(reply->command, DCB_CMD_IEEE_GET);
  ASSERT_TRUE(reply->pfc.has_value());
  EXPECT_EQ(reply->pfc->capability, 4);
  EXPECT_EQ(reply->pfc->enabled, 0x0f);
  EXPECT_EQ(reply->pfc->requests[3], 12u);
  EXPECT_EQ(reply->pfc->indications[3], 34u);
  EXPECT_EQ(reply->dcbx, mode);
}

TEST(DcbMessageTest, ADriverWithoutIeeePfcHasNoPfcInItsReply) {
  std::string attributes;
  Put(attributes, DCB_ATTR_IFNAME, "eth0", 5);
  Put(attributes, DCB_ATTR_IEEE | NLA_F_NESTED, "", 0);
  size_t length = 0;
  absl::StatusOr<DcbReply> reply =
      ParseDcbMessage(Reply(RTM_GETDCB, DCB_CMD_IEEE_GET, attributes, 1), &length);
  ASSERT_OK(reply);
  EXPECT_FALSE(reply->pfc.has_value());
}

TEST(DcbMessageTest, TheDriversVerdictOnASetIsAU8InTheReply) {
  // dcbnl_ieee_set(): nla_put_u8(skb, DCB_ATTR_IEEE, err) with err = -EINVAL.
  std::string attributes;
  Put(attributes, DCB_ATTR_IFNAME, "so0", 4);
  const uint8_t einval = static_cast<uint8_t>(-EINVAL);
  Put(attributes, DCB_ATTR_IEEE, &einval, 1);
  size_t length = 0;
  absl::StatusOr<DcbReply> reply =
      ParseDcbMessage(Reply(RTM_SETDCB, DCB_CMD_IEEE_SET, attributes, 1), &length);
  ASSERT_OK(reply);
  ASSERT_TRUE(reply->set_result.has_value());
  EXPECT_EQ(SetResultErrno(*reply->set_result), EINVAL);
  EXPECT_EQ(SetResultErrno(0), 0);
}

TEST(DcbMessageTest, ParsesTheCoresError) {
  std::string message(NLMSG_HDRLEN, '\0');
  nlmsgerr error;
  std::memset(&error, 0, sizeof(error));
  error.error = -EOPNOTSUPP;
  message.append(reinterpret_cast<const char*>(&error), sizeof(error));
  nlmsghdr header{.nlmsg_len = static_cast<uint32_t>(message.size()),
                  .nlmsg_type = NLMSG_ERROR,
                  .nlmsg_flags = 0,
                  .nlmsg_seq = 3,
                  .nlmsg_pid = 0};
  std::memcpy(message.data(), &header, sizeof(header));
  size_t length = 0;
  absl::StatusOr<DcbReply> reply = ParseDcbMessage(message, &length);
  ASSERT_OK(reply);
  EXPECT_EQ(reply->error, EOPNOTSUPP);
}

TEST(DcbMessageTest, RefusesTruncatedMessages) {
  std::string attributes;
  ieee_pfc pfc{};
  std::string nest;
  Put(nest, DCB_ATTR_IEEE_PFC, &pfc, 10);  // shorter than struct ieee_pfc
  Put(attributes, DCB_ATTR_IEEE, nest.data(), nest.size());
  size_t length = 0;
  absl::StatusOr<DcbReply> short_pfc =
      ParseDcbMessage(Reply(RTM_GETDCB, DCB_CMD_IEEE_GET, attributes, 1), &length);
  EXPECT_EQ(short_pfc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_pfc.status().message(), HasSubstr("DCB_ATTR_IEEE_PFC of 10 bytes"));
  const std::string whole = Reply(RTM_GETDCB, DCB_CMD_IEEE_GET, "", 1);
  EXPECT_FALSE(ParseDcbMessage(whole.substr(0, whole.size() - 2), &length).ok());
  EXPECT_FALSE(ParseDcbMessage("abc", &length).ok());
}

}  // namespace
}  // namespace rocenet::os
