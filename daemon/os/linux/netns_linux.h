// NetnsLinux: the Netns seam over setns(2), one short-lived thread per piece
// of work so no thread is ever left in the wrong namespace.
#pragma once

#include "daemon/os/netns.h"

namespace rocenet::os {

class NetnsLinux final : public Netns {
 public:
  // Opens the calling thread's namespace as the host one.
  static absl::StatusOr<std::unique_ptr<NetnsLinux>> Create();

  absl::StatusOr<std::unique_ptr<NetnsHandle>> Open(absl::string_view path) override;
  const NetnsHandle& host() const override { return *host_; }
  bool IsHost(const NetnsHandle& ns) const override;
  absl::StatusOr<std::unique_ptr<Netlink>> OpenNetlink(const NetnsHandle& ns) override;
  absl::StatusOr<std::unique_ptr<PacketSocket>> OpenLldp(const NetnsHandle& ns, int ifindex,
                                                         absl::string_view ifname) override;

 private:
  explicit NetnsLinux(std::unique_ptr<NetnsHandle> host) : host_(std::move(host)) {}

  std::unique_ptr<NetnsHandle> host_;
};

}  // namespace rocenet::os
