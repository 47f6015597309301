// SPDX-License-Identifier: Apache-2.0
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
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/link_message.h"
#include "daemon/os/linux/netlink_error.h"

namespace rocenet::os {
namespace {

// Large enough for a burst of events from a 64-port node changing at once.
constexpr int kEventBufferBytes = 4 << 20;

int CollectLinks(nl_msg* msg, void* arg) {
  auto* out = static_cast<std::vector<LinkEvent>*>(arg);
  if (auto event = ParseLinkMessage(nlmsg_hdr(msg)); event.has_value()) {
    out->push_back(std::move(*event));
  }
  return NL_OK;
}

int CollectEvents(nl_msg* msg, void* arg) {
  auto* batch = static_cast<LinkEventBatch*>(arg);
  switch (nlmsg_hdr(msg)->nlmsg_type) {
    case RTM_NEWADDR:
    case RTM_DELADDR:
      batch->addresses_changed = true;
      return NL_OK;
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
      batch->routes_changed = true;
      return NL_OK;
    default:
      return CollectLinks(msg, &batch->events);
  }
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
  if (err == 0) {
    err = nl_socket_add_memberships(sock, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV4_ROUTE, 0);
  }
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
  nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, CollectEvents, &batch);
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

absl::Status NetlinkLinux::Dump(int type, const void* header, size_t header_size,
                                int (*on_message)(nl_msg*, void*), void* arg,
                                absl::string_view what) {
  if (int err = nl_send_simple(request_, type, NLM_F_DUMP, const_cast<void*>(header), header_size);
      err < 0) {
    return NlError(err, absl::StrCat("netlink: request ", what));
  }
  nl_socket_modify_cb(request_, NL_CB_VALID, NL_CB_CUSTOM, on_message, arg);
  if (int err = nl_recvmsgs_default(request_); err < 0) {
    return NlError(err, absl::StrCat("netlink: read ", what));
  }
  return absl::OkStatus();
}

absl::Status NetlinkLinux::Transact(nl_msg* msg, absl::string_view what) {
  int err = nl_send_auto(request_, msg);
  nlmsg_free(msg);
  if (err >= 0) {
    // A plain ack handler: dump callbacks from an earlier request must not see it.
    nl_socket_modify_cb(request_, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    err = nl_wait_for_ack(request_);
  }
  if (err < 0) return NlError(err, what);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LinkInfo>> NetlinkLinux::ListLinks() {
  ifinfomsg request{};
  request.ifi_family = AF_UNSPEC;
  std::vector<LinkEvent> events;
  RETURN_IF_ERROR(Dump(RTM_GETLINK, &request, sizeof(request), CollectLinks, &events, "link dump"));
  std::vector<LinkInfo> links;
  links.reserve(events.size());
  for (LinkEvent& event : events) {
    AddEthtoolInfo(ethtool_fd_, event.link);
    links.push_back(std::move(event.link));
  }
  return links;
}

}  // namespace rocenet::os
