// SPDX-License-Identifier: Apache-2.0
// MacCounters: a port's MAC-level counters, from the driver's ethtool
// statistics.
//
// On Gaudi (hbl_en) IFLA_STATS64 counts only the driver's software Ethernet
// path (LLDP, ARP, ICMP); RoCE traffic and MAC errors are only in the ethtool
// statistics, under IEEE 802.3 / RFC 2863 names. Other drivers name them
// their own way. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "daemon/os/ethtool.h"

namespace rocenet::inventory {

// Each field is set when the driver has that counter.
struct MacCounters {
  std::optional<uint64_t> receive_bytes;
  std::optional<uint64_t> transmit_bytes;
  std::optional<uint64_t> receive_frames;
  std::optional<uint64_t> transmit_frames;
  std::optional<uint64_t> receive_errors;
  std::optional<uint64_t> transmit_errors;
  // Frames received with a bad frame check sequence (CRC).
  std::optional<uint64_t> receive_fcs_errors;
  // PFC pause frames sent and received, by priority (0..7), where the
  // driver counts them per priority under names rocenet knows (mlx5:
  // tx_prio<N>_pause, rx_prio<N>_pause). dcbnl's counters come first; these
  // serve a driver that has no dcbnl.
  std::map<int, uint64_t> pfc_sent;
  std::map<int, uint64_t> pfc_received;

  friend bool operator==(const MacCounters&, const MacCounters&) = default;
};

// The MAC counters among `statistics`, by the names drivers give them:
// IEEE 802.3 / RFC 2863 (OctetsReceivedOK or aOctetsReceivedOK,
// FramesReceivedOK or the sum of ifInUcastPkts, ifInMulticastPkts and
// ifInBroadcastPkts, ifInErrors, FrameCheckSequenceErrors, and their
// transmit sides), mlx5's *_phy port counters, else the common driver names
// (rx_bytes, rx_packets, rx_errors, rx_crc_errors, ...: e1000e, igb, ixgbe,
// virtio_net); nullopt when there is none (veth).
std::optional<MacCounters> ParseMacCounters(const std::vector<os::NamedCounter>& statistics);

}  // namespace rocenet::inventory
