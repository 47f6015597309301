// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/counter_names.h"

#include "absl/strings/strip.h"

namespace rocenet::inventory {
namespace {

struct Mapping {
  absl::string_view counter;
  absl::string_view event;
};

// hw_counters names: rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c),
// mlx5 (drivers/infiniband/hw/mlx5/counters.c), bnxt_re
// (drivers/infiniband/hw/bnxt_re/hw_counters.c).
constexpr Mapping kHwCounters[] = {
    {"out_of_seq_request", kOutOfSequence},
    {"out_of_sequence", kOutOfSequence},
    {"oos_drop_count", kOutOfSequence},
    {"duplicate_request", kDuplicateRequest},
    {"rcvd_seq_err", kSequenceErrorNak},
    {"packet_seq_err", kSequenceErrorNak},
    {"implied_nak_seq_err", kSequenceErrorNak},
    {"seq_err_naks_rcvd", kSequenceErrorNak},
    {"local_ack_timeout_err", kAckTimeout},
    {"to_retransmits", kAckTimeout},
    {"completer_retry_err", kRetry},
    {"retry_exceeded_err", kRetriesExceeded},
    {"req_transport_retries_exceeded", kRetriesExceeded},
    {"max_retry_exceeded", kRetriesExceeded},
    {"rcvd_rnr_err", kRnrNak},
    {"rnr_nak_retry_err", kRnrNak},
    {"rnr_naks_rcvd", kRnrNak},
    {"retry_rnr_exceeded_err", kRnrRetriesExceeded},
    {"req_rnr_retries_exceeded", kRnrRetriesExceeded},
};

// Gaudi's NIC driver (hbl_cn) counts the PSN checks of its RoCE engine in
// the ethtool statistics of the port's net device.
constexpr Mapping kEthtool[] = {
    {"spmu_res_out_of_sequence_psn", kOutOfSequence},
    {"spmu_res_duplicate_psn", kDuplicateRequest},
    {"spmu_req_out_of_range_psn", kPsnOutOfRange},
};

// DCQCN, in hw_counters: mlx5 and bnxt_re.
constexpr Mapping kCongestionHwCounters[] = {
    {"np_cnp_sent", kCnpSent},          {"rp_cnp_handled", kCnpHandled},
    {"rp_cnp_ignored", kCnpIgnored},    {"np_ecn_marked_roce_packets", kEcnMarked},
    {"rx_ecn_marked_pkts", kEcnMarked},
};

// In ethtool statistics: mlx5 (Documentation/networking/device_drivers/
// ethernet/mellanox/mlx5/counters.rst) and hbl_en. The per-priority
// discard counters are matched by their pattern below.
constexpr Mapping kLosslessEthtool[] = {
    {"rx_discards_phy", kDiscards},
    {"DropEvents", kDiscards},
    {"tx_pause_storm_warning_events", kPauseStormWarnings},
    {"tx_pause_storm_error_events", kPauseStormErrors},
};

constexpr Mapping kFecEthtool[] = {
    {"correctable_errors", kCorrectedBlocks},
    {"uncorrectable_errors", kUncorrectableBlocks},
    {"rx_corrected_bits_phy", kCorrectedBits},
};

constexpr Mapping kPhyHwCounters[] = {
    {"link_downed", kLinkDownEvents},
};

constexpr Mapping kPhyEthtool[] = {
    {"link_down_events_phy", kLinkDownEvents}, {"pcs_link_toggles", kLinkToggles},
    {"pcs_link_restores", kLinkRestores},      {"pcs_local_faults", kLocalFaults},
    {"pcs_remote_faults", kRemoteFaults},
};

template <size_t N>
void Add(const std::vector<os::NamedCounter>& counters, const Mapping (&table)[N],
         EventSources& out) {
  for (const auto& [name, value] : counters) {
    for (const Mapping& mapping : table) {
      if (mapping.counter == name) out[std::string(mapping.event)][name] += value;
    }
  }
}

std::map<std::string, uint64_t> Sums(const EventSources& sources) {
  std::map<std::string, uint64_t> out;
  for (const auto& [event, counters] : sources) {
    uint64_t& sum = out[event];
    for (const auto& [name, value] : counters) sum += value;
  }
  return out;
}

// "rx_prio3_buf_discard" with `suffix` "_buf_discard": a priority 0..7.
bool IsPriorityCounter(absl::string_view name, absl::string_view suffix) {
  return absl::ConsumePrefix(&name, "rx_prio") && absl::ConsumeSuffix(&name, suffix) &&
         name.size() == 1 && name[0] >= '0' && name[0] <= '7';
}

}  // namespace

PortEventSources MapEventSources(const std::vector<os::NamedCounter>& hw_counters,
                                 const std::vector<os::NamedCounter>& ethtool) {
  PortEventSources out;
  Add(hw_counters, kHwCounters, out.transport);
  Add(ethtool, kEthtool, out.transport);
  Add(hw_counters, kCongestionHwCounters, out.congestion);
  Add(ethtool, kLosslessEthtool, out.lossless);
  for (const auto& [name, value] : ethtool) {
    if (IsPriorityCounter(name, "_buf_discard")) {
      out.lossless[std::string(kBufferDiscards)][name] += value;
    }
    if (IsPriorityCounter(name, "_cong_discard")) {
      out.lossless[std::string(kCongestionDiscards)][name] += value;
    }
  }
  Add(ethtool, kFecEthtool, out.fec);
  Add(hw_counters, kPhyHwCounters, out.phy);
  Add(ethtool, kPhyEthtool, out.phy);
  return out;
}

PortEvents MapEvents(const std::vector<os::NamedCounter>& hw_counters,
                     const std::vector<os::NamedCounter>& ethtool) {
  const PortEventSources sources = MapEventSources(hw_counters, ethtool);
  return {Sums(sources.transport), Sums(sources.congestion), Sums(sources.lossless),
          Sums(sources.fec), Sums(sources.phy)};
}

std::map<std::string, uint64_t> EventTotals::Fold(const EventSources& sources, Family& family) {
  std::map<std::string, uint64_t> out;
  for (const auto& [event, counters] : sources) {
    auto total = family.totals.find(event);
    std::map<std::string, uint64_t>& last = family.last[event];
    if (total == family.totals.end()) {
      // The event's first read: its plain sum.
      uint64_t sum = 0;
      for (const auto& [name, value] : counters) sum += value;
      total = family.totals.emplace(event, sum).first;
    } else {
      for (const auto& [name, value] : counters) {
        auto before = last.find(name);
        if (before == last.end()) continue;  // first seen: a baseline
        // Went back: the driver zeroed it; what it counts now came since.
        total->second += value >= before->second ? value - before->second : value;
      }
    }
    // A counter missing from this read keeps its last value, so that it
    // goes on from there when it is read again.
    for (const auto& [name, value] : counters) last[name] = value;
    out[event] = total->second;
  }
  return out;
}

PortEvents EventTotals::Update(const PortEventSources& sources) {
  return {Fold(sources.transport, transport_), Fold(sources.congestion, congestion_),
          Fold(sources.lossless, lossless_), Fold(sources.fec, fec_), Fold(sources.phy, phy_)};
}

std::map<std::string, uint64_t> TransportEvents(const std::vector<os::NamedCounter>& hw_counters,
                                                const std::vector<os::NamedCounter>& ethtool) {
  return MapEvents(hw_counters, ethtool).transport;
}

}  // namespace rocenet::inventory
