// SPDX-License-Identifier: Apache-2.0
// Netns: the seam for everything that happens inside another network
// namespace (a pod's).
//
// setns(2) changes only the calling thread, so the Linux implementation does
// each piece of work on a thread of its own that enters the namespace, and
// hands back file descriptors: a netlink or packet socket stays bound to the
// namespace it was opened in, whatever thread uses it afterwards. Methods
// block the caller until the work is done (microseconds). Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/os/netlink.h"
#include "daemon/os/packet_socket.h"
#include "daemon/os/rdma.h"

namespace rocenet::os {

// An open reference to a network namespace; keeps it alive while held.
class NetnsHandle {
 public:
  virtual ~NetnsHandle() = default;
  virtual int fd() const = 0;
  virtual const std::string& path() const = 0;
};

class Netns {
 public:
  virtual ~Netns() = default;

  // Opens `path`; FailedPrecondition unless it is a network namespace,
  // NotFound when it does not exist.
  virtual absl::StatusOr<std::unique_ptr<NetnsHandle>> Open(absl::string_view path) = 0;

  // The namespace the daemon runs in.
  virtual const NetnsHandle& host() const = 0;

  // Whether `ns` is the daemon's own namespace, whatever path opened it
  // (/proc/1/ns/net, a bind mount of it under /run/netns).
  virtual bool IsHost(const NetnsHandle& ns) const = 0;

  // A Netlink bound to `ns`.
  virtual absl::StatusOr<std::unique_ptr<Netlink>> OpenNetlink(const NetnsHandle& ns) = 0;

  // The RDMA subsystem as seen from `ns`; Unavailable when the kernel has
  // no RDMA netlink.
  virtual absl::StatusOr<std::unique_ptr<Rdma>> OpenRdma(const NetnsHandle& ns) = 0;

  // An LLDP receive socket on `ifindex` inside `ns`.
  virtual absl::StatusOr<std::unique_ptr<PacketSocket>> OpenLldp(const NetnsHandle& ns, int ifindex,
                                                                 absl::string_view ifname) = 0;
};

}  // namespace rocenet::os
