// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/mac_counters.h"

#include <initializer_list>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"

namespace rocenet::inventory {
namespace {

using Table = std::map<std::string, uint64_t>;

// The first of `names` the driver has.
std::optional<uint64_t> First(const Table& table, std::initializer_list<std::string> names) {
  for (const std::string& name : names) {
    if (auto it = table.find(name); it != table.end()) return it->second;
  }
  return std::nullopt;
}

// The sum of `names` when the driver has at least one of them.
std::optional<uint64_t> Sum(const Table& table, std::initializer_list<const char*> names) {
  std::optional<uint64_t> out;
  for (const char* name : names) {
    if (auto it = table.find(name); it != table.end()) out = out.value_or(0) + it->second;
  }
  return out;
}

}  // namespace

std::optional<MacCounters> ParseMacCounters(const std::vector<os::NamedCounter>& statistics) {
  Table table;
  for (const auto& [name, value] : statistics) table.emplace(name, value);
  MacCounters out;
  // Each counter under the IEEE 802.3 / RFC 2863 names first (hbl_en), then
  // mlx5's port counters (*_phy), then the names most other drivers give
  // (e1000e, igb, ixgbe, virtio_net: rx_bytes, rx_errors, rx_crc_errors).
  out.receive_bytes =
      First(table, {"OctetsReceivedOK", "aOctetsReceivedOK", "rx_bytes_phy", "rx_bytes"});
  out.transmit_bytes =
      First(table, {"OctetsTransmittedOK", "aOctetsTransmittedOK", "tx_bytes_phy", "tx_bytes"});
  out.receive_frames = First(table, {"FramesReceivedOK", "aFramesReceivedOK", "rx_packets_phy"});
  if (!out.receive_frames.has_value()) {
    out.receive_frames = Sum(table, {"ifInUcastPkts", "ifInMulticastPkts", "ifInBroadcastPkts"});
  }
  out.transmit_frames =
      First(table, {"FramesTransmittedOK", "aFramesTransmittedOK", "tx_packets_phy"});
  if (!out.transmit_frames.has_value()) {
    out.transmit_frames =
        Sum(table, {"ifOutUcastPkts", "ifOutMulticastPkts", "ifOutBroadcastPkts"});
  }
  // The common names last: where a driver has the per-cast sums, they are
  // the MAC's and these its software path's.
  if (!out.receive_frames.has_value()) out.receive_frames = First(table, {"rx_packets"});
  if (!out.transmit_frames.has_value()) out.transmit_frames = First(table, {"tx_packets"});
  out.receive_errors = First(table, {"ifInErrors", "rx_errors"});
  out.transmit_errors = First(table, {"ifOutErrors", "tx_errors"});
  out.receive_fcs_errors = First(table, {"FrameCheckSequenceErrors", "aFrameCheckSequenceErrors",
                                         "rx_crc_errors_phy", "rx_crc_errors"});
  // Per priority: mlx5's tx_prio<N>_pause, and Gaudi's IEEE 802.3
  // class-based flow control counters (aCBFCPAUSETx<N>, aCBFCPAUSERx<N>).
  for (int priority = 0; priority < 8; ++priority) {
    if (std::optional<uint64_t> sent = First(table, {absl::StrCat("tx_prio", priority, "_pause"),
                                                     absl::StrCat("aCBFCPAUSETx", priority)})) {
      out.pfc_sent[priority] = *sent;
    }
    if (std::optional<uint64_t> received =
            First(table, {absl::StrCat("rx_prio", priority, "_pause"),
                          absl::StrCat("aCBFCPAUSERx", priority)})) {
      out.pfc_received[priority] = *received;
    }
  }
  if (out == MacCounters{}) return std::nullopt;
  return out;
}

}  // namespace rocenet::inventory
