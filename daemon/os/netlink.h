// Netlink: the seam between rocenet and the kernel's rtnetlink.
//
// One implementation talks to the kernel (os/linux/netlink_linux.h); unit
// tests use a hand-written fake. An instance is used from one thread (the
// daemon's event loop) only. Every failure is a Status naming the request.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "daemon/os/link.h"

namespace rocenet::os {

struct LinkEventBatch {
  std::vector<LinkEvent> events;
  // The kernel dropped events (socket buffer overrun): the caller must
  // resynchronise with ListLinks().
  bool overflowed = false;
};

class Netlink {
 public:
  virtual ~Netlink() = default;

  // Starts queuing link events. Call before the first ListLinks() so no
  // change between the dump and the subscription is missed.
  virtual absl::Status SubscribeLinkEvents() = 0;

  // A file descriptor that becomes readable when events are queued; -1
  // before SubscribeLinkEvents().
  virtual int event_fd() const = 0;

  // Drains the queued events without blocking.
  virtual absl::StatusOr<LinkEventBatch> ReadLinkEvents() = 0;

  // A full dump of the links of the current network namespace.
  virtual absl::StatusOr<std::vector<LinkInfo>> ListLinks() = 0;
};

}  // namespace rocenet::os
