// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/dcb_linux.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

constexpr size_t kDcbReplyBufferSize = 16384;

}  // namespace

absl::StatusOr<std::unique_ptr<DcbLinux>> DcbLinux::Open() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return ::rocenet::ErrnoToStatus(errno, "dcbnl: open an rtnetlink socket");
  return std::unique_ptr<DcbLinux>(new DcbLinux(fd));
}

DcbLinux::~DcbLinux() { close(fd_); }

absl::StatusOr<DcbReply> DcbLinux::Transact(const std::string& request, const std::string& what) {
  uint32_t seq;
  std::memcpy(&seq, request.data() + offsetof(nlmsghdr, nlmsg_seq), sizeof(seq));
  if (send(fd_, request.data(), request.size(), 0) < 0) {
    return ::rocenet::ErrnoToStatus(errno, what);
  }
  std::optional<DcbReply> answer;
  std::vector<char> buffer(kDcbReplyBufferSize);
  for (;;) {
    const ssize_t received = recv(fd_, buffer.data(), buffer.size(), 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      return ::rocenet::ErrnoToStatus(errno, what);
    }
    absl::string_view bytes(buffer.data(), static_cast<size_t>(received));
    while (!bytes.empty()) {
      uint32_t message_seq;
      if (bytes.size() < sizeof(nlmsghdr)) break;
      std::memcpy(&message_seq, bytes.data() + offsetof(nlmsghdr, nlmsg_seq), sizeof(message_seq));
      size_t length = 0;
      absl::StatusOr<DcbReply> message = ParseDcbMessage(bytes, &length);
      if (!message.ok())
        return absl::InternalError(absl::StrCat(what, ": ", message.status().message()));
      bytes.remove_prefix(length);
      if (message_seq != seq) continue;
      if (message->error.has_value()) {
        if (*message->error != 0) return ::rocenet::ErrnoToStatus(*message->error, what);
        // The acknowledgement follows the reply.
        if (answer.has_value()) return *answer;
        return absl::InternalError(absl::StrCat(what, ": acknowledged without a reply"));
      }
      answer = *std::move(message);
    }
  }
}

absl::StatusOr<PfcSettings> DcbLinux::GetPfc(absl::string_view ifname) {
  const std::string what = absl::StrCat("device ", ifname, ": read PFC (dcbnl)");
  absl::StatusOr<DcbReply> reply = Transact(BuildIeeeGet(ifname, ++seq_), what);
  if (!reply.ok()) return reply.status();
  if (!reply->pfc.has_value()) {
    return absl::UnimplementedError(absl::StrCat(what, ": the driver has no IEEE PFC"));
  }
  return *reply->pfc;
}

absl::Status DcbLinux::SetPfc(absl::string_view ifname, uint8_t enabled) {
  absl::StatusOr<PfcSettings> current = GetPfc(ifname);
  if (!current.ok()) return current.status();
  // The driver takes IEEE settings only in IEEE mode; one without a DCBX
  // mode (no getdcbx) takes them as they come.
  const std::string dcbx_what =
      absl::StrCat("device ", ifname, ": set DCBX mode host IEEE (dcbnl)");
  absl::StatusOr<DcbReply> mode = Transact(BuildGetDcbx(ifname, ++seq_), dcbx_what);
  if (mode.ok() && mode->dcbx.has_value() && *mode->dcbx != HostIeeeDcbxMode()) {
    absl::StatusOr<DcbReply> set =
        Transact(BuildSetDcbx(ifname, HostIeeeDcbxMode(), ++seq_), dcbx_what);
    if (!set.ok()) return set.status();
    if (set->dcbx.value_or(1) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          dcbx_what, ": the driver refused the mode (it reports 0x", absl::Hex(*mode->dcbx), ")"));
    }
  } else if (!mode.ok() && !absl::IsUnimplemented(mode.status())) {
    return mode.status();
  }
  PfcSettings next = *current;
  next.enabled = enabled;
  const std::string what = absl::StrCat("device ", ifname, ": set PFC (dcbnl)");
  absl::StatusOr<DcbReply> reply = Transact(BuildIeeeSetPfc(ifname, next, ++seq_), what);
  if (!reply.ok()) return reply.status();
  if (const int error = SetResultErrno(reply->set_result.value_or(0)); error != 0) {
    return ::rocenet::ErrnoToStatus(error, absl::StrCat(what, ": the driver refused it"));
  }
  // A driver without ieee_setpfc is skipped silently by the kernel.
  absl::StatusOr<PfcSettings> after = GetPfc(ifname);
  if (!after.ok()) return after.status();
  if (after->enabled != enabled) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": the driver kept its setting (it cannot set PFC)"));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::os
