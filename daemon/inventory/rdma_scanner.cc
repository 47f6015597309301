// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/rdma_scanner.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rocenet::inventory {
namespace {

constexpr char kRoceV2[] = "RoCE v2";

std::string PortDir(const RdmaInfo& info) {
  return absl::StrCat("class/infiniband/", info.device, "/ports/", info.port);
}

}  // namespace

std::pair<int, std::string> ParsePortState(const std::string& text) {
  std::pair<std::string, std::string> parts = absl::StrSplit(text, absl::MaxSplits(':', 1));
  int number = 0;
  if (!absl::SimpleAtoi(parts.first, &number) || number <= 0) return {0, ""};
  return {number, std::string(absl::StripAsciiWhitespace(parts.second))};
}

void RdmaScanner::ReadState(RdmaInfo& info) const {
  const std::string dir = PortDir(info);
  absl::StatusOr<std::string> state = sysfs_->ReadAttribute(absl::StrCat(dir, "/state"));
  absl::StatusOr<std::string> physical = sysfs_->ReadAttribute(absl::StrCat(dir, "/phys_state"));
  std::tie(info.state, info.state_name) =
      state.ok() ? ParsePortState(*state) : std::pair<int, std::string>(0, "");
  std::tie(info.physical_state, info.physical_state_name) =
      physical.ok() ? ParsePortState(*physical) : std::pair<int, std::string>(0, "");
}

std::vector<os::NamedCounter> RdmaScanner::ReadCounters(const RdmaInfo& info) const {
  std::vector<os::NamedCounter> out;
  const std::string dir = absl::StrCat(PortDir(info), "/hw_counters");
  absl::StatusOr<std::vector<std::string>> names = sysfs_->ListDirectory(dir);
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    if (name == "lifespan") continue;
    absl::StatusOr<std::string> text = sysfs_->ReadAttribute(absl::StrCat(dir, "/", name));
    uint64_t value = 0;
    if (!text.ok() || !absl::SimpleAtoi(*text, &value)) continue;
    out.emplace_back(name, value);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Ipv4OfGid(const std::string& gid) {
  std::vector<std::string> groups = absl::StrSplit(absl::AsciiStrToLower(gid), ':');
  if (groups.size() != 8) return "";
  for (int i = 0; i < 5; ++i) {
    if (groups[i] != "0000") return "";
  }
  if (groups[5] != "ffff") return "";
  uint32_t high = 0, low = 0;
  if (groups[6].size() != 4 || groups[7].size() != 4 || !absl::SimpleHexAtoi(groups[6], &high) ||
      !absl::SimpleHexAtoi(groups[7], &low)) {
    return "";
  }
  return absl::StrCat(high >> 8, ".", high & 0xff, ".", low >> 8, ".", low & 0xff);
}

std::map<std::string, RdmaInfo> RdmaScanner::Scan() const {
  std::map<std::string, std::string> uverbs_of;  // ib device -> uverbsN
  if (auto nodes = sysfs_->ListDirectory("class/infiniband_verbs"); nodes.ok()) {
    for (const std::string& node : *nodes) {
      if (auto ibdev =
              sysfs_->ReadAttribute(absl::StrCat("class/infiniband_verbs/", node, "/ibdev"));
          ibdev.ok()) {
        uverbs_of[*ibdev] = node;
      }
    }
  }
  std::map<std::string, RdmaInfo> out;
  absl::StatusOr<std::vector<std::string>> devices = sysfs_->ListDirectory("class/infiniband");
  if (!devices.ok()) return out;  // no RDMA on this node
  for (const std::string& device : *devices) {
    const std::string ports_dir = absl::StrCat("class/infiniband/", device, "/ports");
    absl::StatusOr<std::vector<std::string>> ports = sysfs_->ListDirectory(ports_dir);
    if (!ports.ok()) continue;
    for (const std::string& port : *ports) {
      int port_number = 0;
      if (!absl::SimpleAtoi(port, &port_number)) continue;
      const std::string dir = absl::StrCat(ports_dir, "/", port);
      absl::StatusOr<std::vector<std::string>> slots =
          sysfs_->ListDirectory(absl::StrCat(dir, "/gid_attrs/ndevs"));
      if (!slots.ok()) continue;
      for (const std::string& slot : *slots) {
        int index = 0;
        if (!absl::SimpleAtoi(slot, &index)) continue;
        absl::StatusOr<std::string> netdev =
            sysfs_->ReadAttribute(absl::StrCat(dir, "/gid_attrs/ndevs/", slot));
        if (!netdev.ok() || netdev->empty()) continue;
        RdmaInfo& info = out[*netdev];
        if (info.device.empty()) {
          info.device = device;
          info.port = port_number;
          if (auto it = uverbs_of.find(device); it != uverbs_of.end()) info.uverbs = it->second;
          ReadState(info);
        }
        absl::StatusOr<std::string> type =
            sysfs_->ReadAttribute(absl::StrCat(dir, "/gid_attrs/types/", slot));
        absl::StatusOr<std::string> gid = sysfs_->ReadAttribute(absl::StrCat(dir, "/gids/", slot));
        if (!type.ok() || *type != kRoceV2 || !gid.ok()) continue;
        const std::string ipv4 = Ipv4OfGid(*gid);
        // The lowest index of an IPv4 RoCE v2 GID: rocenet gives each port
        // one address, so there is one.
        if (ipv4.empty() || (info.gid_index >= 0 && info.gid_index < index)) continue;
        info.gid_index = index;
        info.gid_ipv4 = ipv4;
      }
    }
  }
  return out;
}

}  // namespace rocenet::inventory
