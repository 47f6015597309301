// SPDX-License-Identifier: Apache-2.0
// DcbLinux: the Dcb seam over dcbnl (rtnetlink, NETLINK_ROUTE), with the
// messages of dcb_message.h. One socket, opened in the namespace the object
// is bound to; requests are synchronous. Setting PFC needs CAP_NET_ADMIN.
#pragma once

#include <memory>
#include <string>

#include "daemon/os/dcb.h"
#include "daemon/os/linux/dcb_message.h"

namespace rocenet::os {

class DcbLinux final : public Dcb {
 public:
  static absl::StatusOr<std::unique_ptr<DcbLinux>> Open();
  ~DcbLinux() override;

  absl::StatusOr<PfcSettings> GetPfc(absl::string_view ifname) override;
  absl::Status SetPfc(absl::string_view ifname, uint8_t enabled) override;

 private:
  explicit DcbLinux(int fd) : fd_(fd) {}
  // Sends `request` and returns the kernel's reply to it; an NLMSG_ERROR
  // other than an acknowledgement as a status naming `what`.
  absl::StatusOr<DcbReply> Transact(const std::string& request, const std::string& what);

  const int fd_;
  uint32_t seq_ = 0;
};

}  // namespace rocenet::os
