// SPDX-License-Identifier: Apache-2.0
// Netlink: the seam between rocenet and the kernel's rtnetlink.
//
// One implementation talks to the kernel (os/linux/netlink_linux.h); unit
// tests use a hand-written fake. An instance is used from one thread (the
// daemon's event loop) only. Every failure is a Status naming the request.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "daemon/os/address.h"
#include "daemon/os/link.h"

namespace rocenet::os {

// The per-interface IPv4 settings rocenet sets (net.ipv4.conf.<if>.*).
enum class Ipv4Conf { kArpIgnore, kArpAnnounce };

// What a moved link gets in its new namespace, in the move's own request.
struct AfterMove {
  uint32_t mtu = 0;  // 0: as it was
  bool up = false;
};

struct LinkEventBatch {
  std::vector<LinkEvent> events;
  // IPv4 addresses or routes changed somewhere in the namespace (ours or
  // someone else's edit); the caller re-checks what it manages.
  bool addresses_changed = false;
  bool routes_changed = false;
  // The kernel dropped events (socket buffer overrun): the caller must
  // resynchronise with ListLinks().
  bool overflowed = false;
};

class Netlink {
 public:
  virtual ~Netlink() = default;

  // Starts queuing link, IPv4 address and IPv4 route events. Call before the
  // first dump so no change between the dump and the subscription is missed.
  virtual absl::Status SubscribeLinkEvents() = 0;

  // A file descriptor that becomes readable when events are queued; -1
  // before SubscribeLinkEvents().
  virtual int event_fd() const = 0;

  // Drains the queued events without blocking.
  virtual absl::StatusOr<LinkEventBatch> ReadLinkEvents() = 0;

  // A full dump of the links of the current network namespace.
  virtual absl::StatusOr<std::vector<LinkInfo>> ListLinks() = 0;

  virtual absl::Status SetLinkUp(int ifindex) = 0;
  virtual absl::Status SetLinkDown(int ifindex) = 0;
  virtual absl::Status SetMtu(int ifindex, uint32_t mtu) = 0;
  virtual absl::Status RenameLink(int ifindex, absl::string_view name) = 0;
  // Sets net.ipv4.conf.<link>.<key> over rtnetlink: /proc/sys is read-only
  // in a container that is not privileged, netlink with CAP_NET_ADMIN is not.
  // The kernel resets these when a link changes namespace.
  virtual absl::Status SetIpv4Conf(int ifindex, Ipv4Conf key, uint32_t value) = 0;
  // Moves the link into the network namespace `netns_fd` and gives it
  // `new_name` there, then applies `after`, all in one request, so it never
  // appears under a name that could clash and costs one round trip. The
  // kernel closes the link to move it; it stays down unless `after.up`.
  virtual absl::Status MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                                const AfterMove& after) = 0;

  // IPv4 addresses of every interface.
  virtual absl::StatusOr<std::vector<AddressInfo>> ListAddresses() = 0;
  // Adding an address that exists is not an error.
  virtual absl::Status AddAddress(const AddressInfo& address) = 0;
  // Deleting an address that does not exist is not an error.
  virtual absl::Status DeleteAddress(const AddressInfo& address) = 0;

  // IPv4 unicast routes of `table`.
  virtual absl::StatusOr<std::vector<RouteInfo>> ListRoutes(uint32_t table) = 0;
  // Adds the route or replaces one with the same destination, table and
  // metric.
  virtual absl::Status ReplaceRoute(const RouteInfo& route) = 0;
  // Deleting a route that does not exist is not an error.
  virtual absl::Status DeleteRoute(const RouteInfo& route) = 0;

  // IPv4 policy rules.
  virtual absl::StatusOr<std::vector<RuleInfo>> ListRules() = 0;
  // Adding a rule that exists is not an error.
  virtual absl::Status AddRule(const RuleInfo& rule) = 0;
  // Deleting a rule that does not exist is not an error.
  virtual absl::Status DeleteRule(const RuleInfo& rule) = 0;
};

}  // namespace rocenet::os
