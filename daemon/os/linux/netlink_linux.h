// SPDX-License-Identifier: Apache-2.0
// NetlinkLinux: the Netlink seam over real rtnetlink sockets (libnl-3).
//
// Two sockets: one subscribed to RTNLGRP_LINK for events, one for requests,
// so a dump never interleaves with event traffic. Used from one thread.
// Speed and permanent MAC that rtnetlink lacks on older kernels come from the
// ethtool ioctl.
#pragma once

#include <memory>

#include "daemon/os/netlink.h"

struct nl_sock;
struct nl_msg;

namespace rocenet::os {

class NetlinkLinux final : public Netlink {
 public:
  // Opens the request socket in the calling thread's network namespace.
  static absl::StatusOr<std::unique_ptr<NetlinkLinux>> Open();
  ~NetlinkLinux() override;

  absl::Status SubscribeLinkEvents() override;
  int event_fd() const override;
  absl::StatusOr<LinkEventBatch> ReadLinkEvents() override;
  absl::StatusOr<std::vector<LinkInfo>> ListLinks() override;
  absl::Status SetLinkUp(int ifindex) override;
  absl::Status SetLinkDown(int ifindex) override;
  absl::Status SetMtu(int ifindex, uint32_t mtu) override;
  absl::Status SetIpv4Conf(int ifindex, Ipv4Conf key, uint32_t value) override;
  absl::Status RenameLink(int ifindex, absl::string_view name) override;
  absl::Status MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                        const AfterMove& after) override;
  absl::StatusOr<std::vector<AddressInfo>> ListAddresses() override;
  absl::Status AddAddress(const AddressInfo& address) override;
  absl::Status DeleteAddress(const AddressInfo& address) override;
  absl::StatusOr<std::vector<RouteInfo>> ListRoutes(uint32_t table) override;
  absl::Status ReplaceRoute(const RouteInfo& route) override;
  absl::Status DeleteRoute(const RouteInfo& route) override;
  absl::StatusOr<std::vector<RuleInfo>> ListRules() override;
  absl::Status AddRule(const RuleInfo& rule) override;
  absl::Status DeleteRule(const RuleInfo& rule) override;

 private:
  NetlinkLinux(nl_sock* request, int ethtool_fd);

  // Sends `msg` (consumed) on the request socket and waits for the kernel's
  // acknowledgement. Errors name `what`.
  absl::Status Transact(nl_msg* msg, absl::string_view what);
  // Sends a dump request and feeds every reply message to `on_message`.
  absl::Status Dump(int type, const void* header, size_t header_size,
                    int (*on_message)(nl_msg*, void*), void* arg, absl::string_view what);

  nl_sock* request_;
  nl_sock* events_ = nullptr;
  int ethtool_fd_;
};

}  // namespace rocenet::os
