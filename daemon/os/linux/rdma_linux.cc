// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/rdma_linux.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"

namespace rocenet::os {
namespace {

constexpr size_t kRdmaReplyBufferSize = 32768;

uint16_t NldevType(int command) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command));
}

// Appends one attribute to a request under construction.
void PutAttribute(std::vector<char>& message, uint16_t type, const void* data, size_t length) {
  nlattr header{.nla_len = static_cast<uint16_t>(NLA_HDRLEN + length), .nla_type = type};
  const size_t at = message.size();
  message.resize(at + NLA_ALIGN(header.nla_len), 0);
  std::memcpy(message.data() + at, &header, sizeof(header));
  std::memcpy(message.data() + at + NLA_HDRLEN, data, length);
}

// Calls `fn(type, payload, length)` for each attribute of a message body.
void ForEachAttribute(const char* data, size_t length,
                      const std::function<void(uint16_t, const char*, size_t)>& fn) {
  size_t at = 0;
  while (at + NLA_HDRLEN <= length) {
    nlattr header;
    std::memcpy(&header, data + at, sizeof(header));
    if (header.nla_len < NLA_HDRLEN || at + header.nla_len > length) return;
    fn(header.nla_type & NLA_TYPE_MASK, data + at + NLA_HDRLEN, header.nla_len - NLA_HDRLEN);
    at += NLA_ALIGN(header.nla_len);
  }
}

// Sends `body` as a request of `command` (a dump with `dump`) and passes
// each answer's attributes to `on_message`; the kernel's error as a status.
absl::Status Transact(int fd, uint32_t seq, int command, bool dump, const std::vector<char>& body,
                      const std::function<void(const char*, size_t)>& on_message,
                      absl::string_view what) {
  std::vector<char> request(NLMSG_HDRLEN, 0);
  request.insert(request.end(), body.begin(), body.end());
  nlmsghdr header{
      .nlmsg_len = static_cast<uint32_t>(request.size()),
      .nlmsg_type = NldevType(command),
      .nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0)),
      .nlmsg_seq = seq,
      .nlmsg_pid = 0};
  std::memcpy(request.data(), &header, sizeof(header));
  if (send(fd, request.data(), request.size(), 0) < 0) return ::rocenet::ErrnoToStatus(errno, what);
  std::vector<char> buffer(kRdmaReplyBufferSize);
  for (;;) {
    const ssize_t received = recv(fd, buffer.data(), buffer.size(), 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      return ::rocenet::ErrnoToStatus(errno, what);
    }
    size_t at = 0;
    const size_t length = static_cast<size_t>(received);
    while (at + NLMSG_HDRLEN <= length) {
      nlmsghdr h;
      std::memcpy(&h, buffer.data() + at, sizeof(h));
      if (h.nlmsg_len < NLMSG_HDRLEN || at + h.nlmsg_len > length) break;
      const char* payload = buffer.data() + at + NLMSG_HDRLEN;
      const size_t payload_length = h.nlmsg_len - NLMSG_HDRLEN;
      at += NLMSG_ALIGN(h.nlmsg_len);
      if (h.nlmsg_seq != seq) continue;
      if (h.nlmsg_type == NLMSG_DONE) return absl::OkStatus();
      if (h.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr error;
        if (payload_length < sizeof(error))
          return absl::InternalError(absl::StrCat(what, ": short reply"));
        std::memcpy(&error, payload, sizeof(error));
        if (error.error == 0) {
          if (!dump) return absl::OkStatus();
          continue;
        }
        return ::rocenet::ErrnoToStatus(-error.error, what);
      }
      on_message(payload, payload_length);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<RdmaLinux>> RdmaLinux::Open() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("RDMA netlink: ", std::strerror(errno), " (no RDMA core in this kernel)"));
  }
  return std::unique_ptr<RdmaLinux>(new RdmaLinux(fd));
}

RdmaLinux::~RdmaLinux() { close(fd_); }

absl::StatusOr<RdmaNetnsMode> RdmaLinux::NetnsMode() {
  int mode = -1;
  absl::Status s = Transact(
      fd_, ++seq_, RDMA_NLDEV_CMD_SYS_GET, /*dump=*/false, {},
      [&](const char* data, size_t length) {
        ForEachAttribute(data, length, [&](uint16_t type, const char* value, size_t size) {
          if (type == RDMA_NLDEV_SYS_ATTR_NETNS_MODE && size >= 1) {
            mode = static_cast<unsigned char>(value[0]);
          }
        });
      },
      "rdma system: read the namespace mode");
  if (!s.ok()) return s;
  // 1: shared (the default); 0: exclusive.
  return mode == 0 ? RdmaNetnsMode::kExclusive : RdmaNetnsMode::kShared;
}

absl::StatusOr<uint32_t> RdmaLinux::DeviceIndex(absl::string_view device) {
  std::optional<uint32_t> found;
  absl::Status s = Transact(
      fd_, ++seq_, RDMA_NLDEV_CMD_GET, /*dump=*/true, {},
      [&](const char* data, size_t length) {
        std::optional<uint32_t> index;
        std::string name;
        ForEachAttribute(data, length, [&](uint16_t type, const char* value, size_t size) {
          if (type == RDMA_NLDEV_ATTR_DEV_INDEX && size >= sizeof(uint32_t)) {
            uint32_t v;
            std::memcpy(&v, value, sizeof(v));
            index = v;
          } else if (type == RDMA_NLDEV_ATTR_DEV_NAME) {
            name.assign(value, strnlen(value, size));
          }
        });
        if (index.has_value() && name == device) found = index;
      },
      absl::StrCat("rdma device ", device, ": list devices"));
  if (!s.ok()) return s;
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("rdma device ", device, ": not in this namespace"));
  }
  return *found;
}

absl::StatusOr<RdmaPortState> RdmaLinux::PortState(absl::string_view device, int port) {
  ASSIGN_OR_RETURN(const uint32_t index, DeviceIndex(device));
  std::vector<char> body;
  PutAttribute(body, RDMA_NLDEV_ATTR_DEV_INDEX, &index, sizeof(index));
  const uint32_t port_index = static_cast<uint32_t>(port);
  PutAttribute(body, RDMA_NLDEV_ATTR_PORT_INDEX, &port_index, sizeof(port_index));
  RdmaPortState out;
  RETURN_IF_ERROR(Transact(
      fd_, ++seq_, RDMA_NLDEV_CMD_PORT_GET, /*dump=*/false, body,
      [&](const char* data, size_t length) {
        ForEachAttribute(data, length, [&](uint16_t type, const char* value, size_t size) {
          if (size < 1) return;
          if (type == RDMA_NLDEV_ATTR_PORT_STATE) out.state = static_cast<unsigned char>(value[0]);
          if (type == RDMA_NLDEV_ATTR_PORT_PHYS_STATE) {
            out.physical_state = static_cast<unsigned char>(value[0]);
          }
        });
      },
      absl::StrCat("rdma device ", device, " port ", port, ": read its state")));
  return out;
}

absl::StatusOr<bool> RdmaLinux::HasDevice(absl::string_view device) {
  absl::StatusOr<uint32_t> index = DeviceIndex(device);
  if (absl::IsNotFound(index.status())) return false;
  if (!index.ok()) return index.status();
  return true;
}

absl::Status RdmaLinux::MoveDevice(absl::string_view device, int netns_fd) {
  absl::StatusOr<uint32_t> index = DeviceIndex(device);
  if (!index.ok()) return index.status();
  std::vector<char> body;
  PutAttribute(body, RDMA_NLDEV_ATTR_DEV_INDEX, &*index, sizeof(uint32_t));
  const uint32_t fd = static_cast<uint32_t>(netns_fd);
  PutAttribute(body, RDMA_NLDEV_NET_NS_FD, &fd, sizeof(fd));
  return Transact(
      fd_, ++seq_, RDMA_NLDEV_CMD_SET, /*dump=*/false, body, [](const char*, size_t) {},
      absl::StrCat("rdma device ", device, ": move to another namespace"));
}

}  // namespace rocenet::os
