#include "daemon/os/linux/netlink_linux.h"

#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/os/linux/link_message.h"

namespace rocenet::os {
namespace {

// Large enough for a burst of events from a 64-port node changing at once.
constexpr int kEventBufferBytes = 4 << 20;

absl::Status NlError(int nl_error, absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", nl_geterror(nl_error)));
}

int CollectLinks(nl_msg* msg, void* arg) {
  auto* out = static_cast<std::vector<LinkEvent>*>(arg);
  if (auto event = ParseLinkMessage(nlmsg_hdr(msg)); event.has_value()) {
    out->push_back(std::move(*event));
  }
  return NL_OK;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NetlinkLinux>> NetlinkLinux::Open() {
  nl_sock* request = nl_socket_alloc();
  if (request == nullptr) return absl::ResourceExhaustedError("netlink: cannot allocate socket");
  if (int err = nl_connect(request, NETLINK_ROUTE); err < 0) {
    nl_socket_free(request);
    return NlError(err, "netlink: connect route socket");
  }
  const int ethtool_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (ethtool_fd < 0) {
    const int saved = errno;
    nl_socket_free(request);
    return ErrnoToStatus(saved, "ethtool socket");
  }
  return std::unique_ptr<NetlinkLinux>(new NetlinkLinux(request, ethtool_fd));
}

NetlinkLinux::NetlinkLinux(nl_sock* request, int ethtool_fd)
    : request_(request), ethtool_fd_(ethtool_fd) {}

NetlinkLinux::~NetlinkLinux() {
  nl_socket_free(request_);
  if (events_ != nullptr) nl_socket_free(events_);
  close(ethtool_fd_);
}

absl::Status NetlinkLinux::SubscribeLinkEvents() {
  if (events_ != nullptr) return absl::OkStatus();
  nl_sock* sock = nl_socket_alloc();
  if (sock == nullptr) return absl::ResourceExhaustedError("netlink: cannot allocate socket");
  nl_socket_disable_seq_check(sock);
  int err = nl_connect(sock, NETLINK_ROUTE);
  if (err == 0) err = nl_socket_add_membership(sock, RTNLGRP_LINK);
  if (err == 0) err = nl_socket_set_nonblocking(sock);
  if (err == 0) err = nl_socket_set_buffer_size(sock, kEventBufferBytes, 0);
  if (err < 0) {
    nl_socket_free(sock);
    return NlError(err, "netlink: subscribe to link events");
  }
  events_ = sock;
  return absl::OkStatus();
}

int NetlinkLinux::event_fd() const { return events_ == nullptr ? -1 : nl_socket_get_fd(events_); }

absl::StatusOr<LinkEventBatch> NetlinkLinux::ReadLinkEvents() {
  if (events_ == nullptr) return absl::FailedPreconditionError("netlink: not subscribed");
  LinkEventBatch batch;
  nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, CollectLinks, &batch.events);
  while (true) {
    const int rc = nl_recvmsgs_default(events_);
    if (rc == -NLE_AGAIN) break;
    if (rc == -NLE_NOMEM) {
      // ENOBUFS: the kernel dropped messages; keep draining, then resync.
      batch.overflowed = true;
      continue;
    }
    if (rc < 0) return NlError(rc, "netlink: read link events");
  }
  for (LinkEvent& event : batch.events) {
    if (event.type == LinkEvent::Type::kChanged) AddEthtoolInfo(ethtool_fd_, event.link);
  }
  return batch;
}

absl::StatusOr<std::vector<LinkInfo>> NetlinkLinux::ListLinks() {
  ifinfomsg request{};
  request.ifi_family = AF_UNSPEC;
  if (int err = nl_send_simple(request_, RTM_GETLINK, NLM_F_DUMP, &request, sizeof(request));
      err < 0) {
    return NlError(err, "netlink: request link dump");
  }
  std::vector<LinkEvent> events;
  nl_socket_modify_cb(request_, NL_CB_VALID, NL_CB_CUSTOM, CollectLinks, &events);
  if (int err = nl_recvmsgs_default(request_); err < 0) {
    return NlError(err, "netlink: read link dump");
  }
  std::vector<LinkInfo> links;
  links.reserve(events.size());
  for (LinkEvent& event : events) {
    AddEthtoolInfo(ethtool_fd_, event.link);
    links.push_back(std::move(event.link));
  }
  return links;
}

}  // namespace rocenet::os
