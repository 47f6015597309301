// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/ethtool_linux.h"

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"

namespace rocenet::os {
namespace {

// A driver that reports more statistics than this is not believed: the
// buffers below are sized from its answer.
constexpr uint32_t kMaxStatistics = 1 << 16;

}  // namespace

absl::StatusOr<std::unique_ptr<EthtoolLinux>> EthtoolLinux::Create() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoToStatus(errno, "ethtool: open socket");
  return std::unique_ptr<EthtoolLinux>(new EthtoolLinux(fd));
}

EthtoolLinux::~EthtoolLinux() {
  close(fd_);
  if (genl_fd_ >= 0) close(genl_fd_);
}

absl::Status EthtoolLinux::OpenNetlink() {
  if (family_ != 0) return absl::OkStatus();
  if (genl_fd_ < 0) {
    genl_fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (genl_fd_ < 0) return ::rocenet::ErrnoToStatus(errno, "ethtool netlink: open a socket");
  }
  absl::StatusOr<EthtoolReply> reply =
      Transact(BuildGetEthtoolFamily(++seq_), "ethtool netlink: find the family");
  if (!reply.ok()) {
    // ENOENT: no such family, a kernel before 5.6.
    if (absl::IsNotFound(reply.status())) {
      return absl::UnimplementedError("ethtool netlink: the kernel has no ethtool family");
    }
    return reply.status();
  }
  if (!reply->family.has_value()) {
    return absl::InternalError("ethtool netlink: the controller named no family id");
  }
  family_ = *reply->family;
  return absl::OkStatus();
}

absl::StatusOr<EthtoolReply> EthtoolLinux::Transact(const std::string& request,
                                                    absl::string_view what) {
  uint32_t seq;
  std::memcpy(&seq, request.data() + offsetof(nlmsghdr, nlmsg_seq), sizeof(seq));
  if (send(genl_fd_, request.data(), request.size(), 0) < 0) {
    return ::rocenet::ErrnoToStatus(errno, what);
  }
  std::vector<char> buffer(8192);
  for (;;) {
    const ssize_t received = recv(genl_fd_, buffer.data(), buffer.size(), 0);
    if (received < 0) {
      if (errno == EINTR) continue;
      return ::rocenet::ErrnoToStatus(errno, what);
    }
    absl::string_view bytes(buffer.data(), static_cast<size_t>(received));
    while (!bytes.empty()) {
      size_t length = 0;
      absl::StatusOr<EthtoolReply> message = ParseEthtoolMessage(bytes, &length);
      if (!message.ok()) {
        return absl::InternalError(absl::StrCat(what, ": ", message.status().message()));
      }
      bytes.remove_prefix(length);
      if (message->seq != seq) continue;  // an answer to an earlier request
      if (message->error.has_value()) {
        if (*message->error == EOPNOTSUPP) {
          return absl::UnimplementedError(absl::StrCat(what, ": the driver has no answer"));
        }
        return ::rocenet::ErrnoToStatus(*message->error, what);
      }
      return *std::move(message);
    }
  }
}

absl::StatusOr<LinkState> EthtoolLinux::GetLinkState(absl::string_view ifname) {
  RETURN_IF_ERROR(OpenNetlink());
  const std::string what = absl::StrCat("device ", ifname, ": read the link state (ethtool)");
  ASSIGN_OR_RETURN(EthtoolReply reply, Transact(BuildLinkStateGet(family_, ifname, ++seq_), what));
  if (!reply.link_state.has_value()) return absl::InternalError(absl::StrCat(what, ": no reply"));
  return *reply.link_state;
}

absl::StatusOr<std::string> EthtoolLinux::ModuleEeprom(absl::string_view ifname, int page, int bank,
                                                       int offset, int length) {
  RETURN_IF_ERROR(OpenNetlink());
  const std::string what =
      absl::StrCat("device ", ifname, ": read page ", page, " of its module's EEPROM (ethtool)");
  ASSIGN_OR_RETURN(
      EthtoolReply reply,
      Transact(BuildModuleEepromGet(family_, ifname, page, bank, offset, length, ++seq_), what));
  if (!reply.eeprom.has_value()) return absl::InternalError(absl::StrCat(what, ": no data"));
  return *reply.eeprom;
}

absl::StatusOr<FecStats> EthtoolLinux::GetFecStats(absl::string_view ifname) {
  RETURN_IF_ERROR(OpenNetlink());
  const std::string what = absl::StrCat("device ", ifname, ": read FEC statistics (ethtool)");
  ASSIGN_OR_RETURN(EthtoolReply reply, Transact(BuildFecGet(family_, ifname, ++seq_), what));
  if (!reply.fec.has_value()) return absl::InternalError(absl::StrCat(what, ": no reply"));
  if (*reply.fec == FecStats{}) {
    return absl::UnimplementedError(absl::StrCat(what, ": the driver counts no FEC statistics"));
  }
  return *reply.fec;
}

absl::Status EthtoolLinux::Request(absl::string_view ifname, void* data, absl::string_view what) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(
        absl::StrCat("ethtool ", what, ": bad interface name \"", ifname, "\""));
  }
  struct ifreq request;
  std::memset(&request, 0, sizeof(request));
  std::memcpy(request.ifr_name, ifname.data(), ifname.size());
  request.ifr_data = static_cast<char*>(data);
  if (ioctl(fd_, SIOCETHTOOL, &request) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("ethtool ", what, " of ", ifname));
  }
  return absl::OkStatus();
}

absl::StatusOr<DriverInfo> EthtoolLinux::Driver(absl::string_view ifname) {
  struct ethtool_drvinfo info;
  std::memset(&info, 0, sizeof(info));
  info.cmd = ETHTOOL_GDRVINFO;
  if (absl::Status s = Request(ifname, &info, "driver info"); !s.ok()) return s;
  DriverInfo out;
  out.driver = std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
  out.firmware_version =
      std::string(info.fw_version, strnlen(info.fw_version, sizeof(info.fw_version)));
  // Drivers without firmware of their own say so in words.
  if (out.firmware_version == "N/A" || out.firmware_version == "n/a") out.firmware_version.clear();
  return out;
}

absl::StatusOr<std::vector<NamedCounter>> EthtoolLinux::Statistics(absl::string_view ifname) {
  // How many statistics: ETHTOOL_GSSET_INFO answers with a bitmap of the
  // sets it knows and one length per set that it sets.
  alignas(struct ethtool_sset_info)
      std::byte sset_buffer[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)] = {};
  auto* sset = reinterpret_cast<struct ethtool_sset_info*>(sset_buffer);
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = 1ULL << ETH_SS_STATS;
  absl::Status status = Request(ifname, sset, "statistics count");
  if (absl::IsUnimplemented(status)) return std::vector<NamedCounter>();
  if (!status.ok()) return status;
  uint32_t count = 0;
  std::memcpy(&count, sset_buffer + sizeof(struct ethtool_sset_info), sizeof(count));
  if ((sset->sset_mask & (1ULL << ETH_SS_STATS)) == 0 || count == 0) {
    return std::vector<NamedCounter>();
  }
  if (count > kMaxStatistics) {
    return absl::OutOfRangeError(
        absl::StrCat("ethtool statistics of ", ifname, ": the driver reports ", count));
  }

  std::vector<std::byte> names(sizeof(struct ethtool_gstrings) + count * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<struct ethtool_gstrings*>(names.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = count;
  if (absl::Status s = Request(ifname, strings, "statistics names"); !s.ok()) return s;

  std::vector<std::byte> values(sizeof(struct ethtool_stats) + count * sizeof(uint64_t));
  auto* stats = reinterpret_cast<struct ethtool_stats*>(values.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = count;
  if (absl::Status s = Request(ifname, stats, "statistics"); !s.ok()) return s;

  // The driver may answer with fewer than it announced (a device that
  // changed in between); never read past what both calls filled.
  const uint32_t filled = std::min({count, strings->len, stats->n_stats});
  std::vector<NamedCounter> out;
  out.reserve(filled);
  for (uint32_t i = 0; i < filled; ++i) {
    const char* name = reinterpret_cast<const char*>(strings->data) + i * ETH_GSTRING_LEN;
    uint64_t value = 0;
    std::memcpy(&value, values.data() + sizeof(struct ethtool_stats) + i * sizeof(uint64_t),
                sizeof(value));
    out.emplace_back(std::string(name, strnlen(name, ETH_GSTRING_LEN)), value);
  }
  return out;
}

}  // namespace rocenet::os
