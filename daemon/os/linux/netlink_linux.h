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

 private:
  NetlinkLinux(nl_sock* request, int ethtool_fd);

  nl_sock* request_;
  nl_sock* events_ = nullptr;
  int ethtool_fd_;
};

}  // namespace rocenet::os
