// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/ethtool_linux.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

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

EthtoolLinux::~EthtoolLinux() { close(fd_); }

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
