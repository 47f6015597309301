// SPDX-License-Identifier: Apache-2.0
// RTM_NEWLINK messages built as net/core/rtnetlink.c builds them (the
// kernel's own structs and constants), then parsed: the carrier counts of
// a kernel that has them, and of one that does not. Real messages are
// parsed in the integration tests (flaps on the simulated fabric).
#include "daemon/os/linux/link_message.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace rocenet::os {
namespace {

void Put(std::string& out, uint16_t type, const void* data, size_t length) {
  nlattr header{.nla_len = static_cast<uint16_t>(NLA_HDRLEN + length), .nla_type = type};
  const size_t at = out.size();
  out.resize(at + NLA_ALIGN(header.nla_len), '\0');
  std::memcpy(out.data() + at, &header, sizeof(header));
  std::memcpy(out.data() + at + NLA_HDRLEN, data, length);
}

void PutU32(std::string& out, uint16_t type, uint32_t value) { Put(out, type, &value, 4); }

// An RTM_NEWLINK of so0, carrier up, with `attributes` after the name.
std::string NewLink(const std::string& attributes) {
  std::string body(NLMSG_ALIGN(sizeof(ifinfomsg)), '\0');
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = 7;
  ifi.ifi_flags = IFF_UP | IFF_LOWER_UP;
  std::memcpy(body.data(), &ifi, sizeof(ifi));
  Put(body, IFLA_IFNAME, "so0", 4);
  const uint8_t carrier = 1;
  Put(body, IFLA_CARRIER, &carrier, 1);
  body += attributes;
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  header.nlmsg_type = RTM_NEWLINK;
  std::string message(NLMSG_HDRLEN, '\0');
  std::memcpy(message.data(), &header, sizeof(header));
  return message + body;
}

TEST(LinkMessageTest, TheCarrierCountsOfAKernelThatHasThem) {
  std::string counts;
  PutU32(counts, IFLA_CARRIER_CHANGES, 7);
  PutU32(counts, IFLA_CARRIER_UP_COUNT, 4);
  PutU32(counts, IFLA_CARRIER_DOWN_COUNT, 3);
  const std::string message = NewLink(counts);
  std::optional<LinkEvent> event =
      ParseLinkMessage(reinterpret_cast<const nlmsghdr*>(message.data()));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->link.name, "so0");
  EXPECT_TRUE(event->link.carrier);
  EXPECT_TRUE(event->link.has_carrier_counts);
  EXPECT_EQ(event->link.carrier_changes, 7u);
  EXPECT_EQ(event->link.carrier_up_count, 4u);
  EXPECT_EQ(event->link.carrier_down_count, 3u);
}

// Before Linux 4.16 there are no counts: none is made up.
TEST(LinkMessageTest, NoCarrierCountsIsSaid) {
  const std::string message = NewLink("");
  std::optional<LinkEvent> event =
      ParseLinkMessage(reinterpret_cast<const nlmsghdr*>(message.data()));
  ASSERT_TRUE(event.has_value());
  EXPECT_FALSE(event->link.has_carrier_counts);
  EXPECT_EQ(event->link.carrier_down_count, 0u);
}

}  // namespace
}  // namespace rocenet::os
