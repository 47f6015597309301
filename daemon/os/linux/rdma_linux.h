// SPDX-License-Identifier: Apache-2.0
// RdmaLinux: the Rdma seam over rdma netlink (NETLINK_RDMA, the nldev
// client): RDMA_NLDEV_CMD_SYS_GET for the namespace mode, RDMA_NLDEV_CMD_GET
// to find a device's index by name, RDMA_NLDEV_CMD_SET with
// RDMA_NLDEV_NET_NS_FD to move it. One socket, opened in the namespace the
// object is bound to; requests are synchronous.
#pragma once

#include <memory>

#include "daemon/os/rdma.h"

namespace rocenet::os {

class RdmaLinux final : public Rdma {
 public:
  // Unavailable when the kernel has no RDMA netlink (no RDMA core loaded).
  static absl::StatusOr<std::unique_ptr<RdmaLinux>> Open();
  ~RdmaLinux() override;

  absl::StatusOr<RdmaNetnsMode> NetnsMode() override;
  absl::StatusOr<bool> HasDevice(absl::string_view device) override;
  absl::Status MoveDevice(absl::string_view device, int netns_fd) override;
  absl::StatusOr<RdmaPortState> PortState(absl::string_view device, int port) override;

 private:
  explicit RdmaLinux(int fd) : fd_(fd) {}
  // The index of `device`, or NotFound.
  absl::StatusOr<uint32_t> DeviceIndex(absl::string_view device);

  const int fd_;
  uint32_t seq_ = 0;
};

}  // namespace rocenet::os
