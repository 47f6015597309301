// SPDX-License-Identifier: Apache-2.0
// EthtoolLinux: the Ethtool seam over the SIOCETHTOOL ioctl.
//
// Create() opens one datagram socket in the calling thread's network
// namespace; every request names the device by its name in that namespace.
// Not thread-safe (one socket, reused); used on the event loop thread.
#pragma once

#include <memory>

#include "daemon/os/ethtool.h"
#include "daemon/os/linux/ethtool_message.h"

namespace rocenet::os {

class EthtoolLinux final : public Ethtool {
 public:
  static absl::StatusOr<std::unique_ptr<EthtoolLinux>> Create();
  ~EthtoolLinux() override;

  absl::StatusOr<DriverInfo> Driver(absl::string_view ifname) override;
  absl::StatusOr<std::vector<NamedCounter>> Statistics(absl::string_view ifname) override;
  absl::StatusOr<LinkState> GetLinkState(absl::string_view ifname) override;
  absl::StatusOr<FecStats> GetFecStats(absl::string_view ifname) override;
  absl::StatusOr<std::string> ModuleEeprom(absl::string_view ifname, int page, int bank, int offset,
                                           int length) override;

 private:
  explicit EthtoolLinux(int fd) : fd_(fd) {}
  // The ethtool genetlink family's socket and id, found at the first use;
  // Unimplemented on a kernel without ethtool netlink (before 5.6).
  absl::Status OpenNetlink();
  // Sends `request` and returns the reply with its sequence number.
  absl::StatusOr<EthtoolReply> Transact(const std::string& request, absl::string_view what);
  // SIOCETHTOOL on `ifname` with `data` (an ethtool command struct).
  absl::Status Request(absl::string_view ifname, void* data, absl::string_view what);

  int fd_;
  int genl_fd_ = -1;
  uint16_t family_ = 0;
  uint32_t seq_ = 0;
};

}  // namespace rocenet::os
