// SPDX-License-Identifier: Apache-2.0
// NetnsLinux: the Netns seam over setns(2).
//
// All work inside other namespaces runs on one worker thread of its own,
// which enters the namespace, does the piece of work and returns to the
// host namespace before it takes the next: no other thread ever leaves the
// host namespace. The worker lives as long as the NetnsLinux (a thread per
// piece cost a scheduler slice on a busy node, a new thread queueing behind
// the running ones, on every attach and detach). Should it ever fail to
// return home, it reports the failure and ends, and the next piece of work
// starts a fresh one.
#pragma once

#include <memory>

#include "daemon/os/netns.h"

namespace rocenet::os {

class NetnsLinux final : public Netns {
 public:
  // Opens the calling thread's namespace as the host one.
  static absl::StatusOr<std::unique_ptr<NetnsLinux>> Create();

  absl::StatusOr<std::unique_ptr<NetnsHandle>> Open(absl::string_view path) override;
  const NetnsHandle& host() const override { return *host_; }
  bool IsHost(const NetnsHandle& ns) const override;
  ~NetnsLinux() override;
  absl::StatusOr<std::unique_ptr<Netlink>> OpenNetlink(const NetnsHandle& ns) override;
  absl::StatusOr<std::unique_ptr<Rdma>> OpenRdma(const NetnsHandle& ns) override;
  absl::StatusOr<std::unique_ptr<PacketSocket>> OpenLldp(const NetnsHandle& ns, int ifindex,
                                                         absl::string_view ifname) override;

 private:
  class Worker;
  explicit NetnsLinux(std::unique_ptr<NetnsHandle> host);

  std::unique_ptr<NetnsHandle> host_;
  std::unique_ptr<Worker> worker_;
};

}  // namespace rocenet::os
