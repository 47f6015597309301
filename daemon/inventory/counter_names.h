// SPDX-License-Identifier: Apache-2.0
// What the drivers' counters mean, under one set of names per family of
// events, mapped from each driver's own: the RDMA port's hw_counters (rxe,
// mlx5, bnxt_re) and the net device's ethtool statistics (Gaudi's NIC
// driver counts its RoCE engine, FEC and PCS there; mlx5 its PHY and
// buffers). A driver without a name for an event has no entry for it.
// Pure.
//
// The families: RoCE transport (retransmits and the like), RoCE
// congestion (DCQCN), lossless traffic (drops on the PFC priorities and
// pause storms), FEC and the PHY's link events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/os/ethtool.h"

namespace rocenet::inventory {

// The responder saw a packet whose PSN is past the one it expected: a
// packet on the way in was lost (rxe out_of_seq_request, mlx5
// out_of_sequence, bnxt_re oos_drop_count, hbl
// spmu_res_out_of_sequence_psn).
inline constexpr absl::string_view kOutOfSequence = "out_of_sequence";
// The responder saw a PSN it had already taken: the requester resent
// (rxe and mlx5 duplicate_request, hbl spmu_res_duplicate_psn).
inline constexpr absl::string_view kDuplicateRequest = "duplicate_request";
// The requester got a PSN sequence error NAK, or inferred one from a
// response (rxe rcvd_seq_err, mlx5 packet_seq_err and implied_nak_seq_err,
// bnxt_re seq_err_naks_rcvd).
inline constexpr absl::string_view kSequenceErrorNak = "sequence_error_nak";
// The requester's ACK timer ran out and it resent (mlx5
// local_ack_timeout_err, bnxt_re to_retransmits).
inline constexpr absl::string_view kAckTimeout = "ack_timeout";
// The requester went back and resent, after a NAK or a timeout (rxe
// completer_retry_err).
inline constexpr absl::string_view kRetry = "retry";
// The requester gave up: the queue pair went to error (rxe
// retry_exceeded_err, mlx5 req_transport_retries_exceeded, bnxt_re
// max_retry_exceeded).
inline constexpr absl::string_view kRetriesExceeded = "retries_exceeded";
// A response's PSN outside the window the requester has in flight (hbl
// spmu_req_out_of_range_psn).
inline constexpr absl::string_view kPsnOutOfRange = "psn_out_of_range";
// Receiver-not-ready NAKs the requester got, and RNR retries run out (rxe
// rcvd_rnr_err and retry_rnr_exceeded_err, mlx5 rnr_nak_retry_err and
// req_rnr_retries_exceeded, bnxt_re rnr_naks_rcvd): the receiving
// application's pace, not the network's.
inline constexpr absl::string_view kRnrNak = "rnr_nak";
inline constexpr absl::string_view kRnrRetriesExceeded = "rnr_retries_exceeded";

// Every event, in a fixed order.
inline constexpr absl::string_view kTransportEvents[] = {
    kOutOfSequence,   kDuplicateRequest, kSequenceErrorNak, kAckTimeout,         kRetry,
    kRetriesExceeded, kPsnOutOfRange,    kRnrNak,           kRnrRetriesExceeded,
};

// RoCE congestion control (DCQCN), counted, never a fault: CNPs this port
// sent as the receiver of marked packets (mlx5 np_cnp_sent), handled and
// ignored as the sender (rp_cnp_handled, rp_cnp_ignored), and ECN-marked
// RoCE packets received (mlx5 np_ecn_marked_roce_packets, bnxt_re
// rx_ecn_marked_pkts).
inline constexpr absl::string_view kCnpSent = "cnp_sent";
inline constexpr absl::string_view kCnpHandled = "cnp_handled";
inline constexpr absl::string_view kCnpIgnored = "cnp_ignored";
inline constexpr absl::string_view kEcnMarked = "ecn_marked";

// Lossless traffic: frames the port dropped for want of buffer (mlx5
// rx_prio<N>_buf_discard, summed over the priorities) or by congestion
// (rx_prio<N>_cong_discard), all it discarded at the PHY (mlx5
// rx_discards_phy, hbl_en DropEvents), and pause storms, where the NIC
// kept sending pause frames and its watchdog stepped in (mlx5
// tx_pause_storm_warning_events, tx_pause_storm_error_events).
inline constexpr absl::string_view kBufferDiscards = "buffer_discards";
inline constexpr absl::string_view kCongestionDiscards = "congestion_discards";
inline constexpr absl::string_view kDiscards = "discards";
inline constexpr absl::string_view kPauseStormWarnings = "pause_storm_warnings";
inline constexpr absl::string_view kPauseStormErrors = "pause_storm_errors";

// FEC: codewords corrected and not correctable (hbl_en correctable_errors,
// uncorrectable_errors; the driver zeroes them at every link up), and bits
// corrected (mlx5 rx_corrected_bits_phy).
inline constexpr absl::string_view kCorrectedBlocks = "corrected_blocks";
inline constexpr absl::string_view kUncorrectableBlocks = "uncorrectable_blocks";
inline constexpr absl::string_view kCorrectedBits = "corrected_bits";

// The PHY's link events: the link went down (mlx5 link_down_events_phy,
// rxe link_downed), toggled (hbl_en pcs_link_toggles), was restored
// (pcs_link_restores), or saw local and remote faults (pcs_local_faults,
// pcs_remote_faults).
inline constexpr absl::string_view kLinkDownEvents = "link_down_events";
inline constexpr absl::string_view kLinkToggles = "link_toggles";
inline constexpr absl::string_view kLinkRestores = "link_restores";
inline constexpr absl::string_view kLocalFaults = "local_faults";
inline constexpr absl::string_view kRemoteFaults = "remote_faults";

// A port's events of every family, each the sum of the driver counters
// that map to it.
struct PortEvents {
  std::map<std::string, uint64_t> transport;
  std::map<std::string, uint64_t> congestion;
  std::map<std::string, uint64_t> lossless;
  std::map<std::string, uint64_t> fec;
  std::map<std::string, uint64_t> phy;

  friend bool operator==(const PortEvents&, const PortEvents&) = default;
};

// The events among `hw_counters` (an RDMA port's, by the driver's names)
// and `ethtool` (the net device's statistics), each the plain sum of its
// counters as read now.
PortEvents MapEvents(const std::vector<os::NamedCounter>& hw_counters,
                     const std::vector<os::NamedCounter>& ethtool);

// One family's events, each by the driver counters it is counted from
// (their names), as read now.
using EventSources = std::map<std::string, std::map<std::string, uint64_t>>;

struct PortEventSources {
  EventSources transport;
  EventSources congestion;
  EventSources lossless;
  EventSources fec;
  EventSources phy;
};

// The same mapping as MapEvents, each counter kept apart.
PortEventSources MapEventSources(const std::vector<os::NamedCounter>& hw_counters,
                                 const std::vector<os::NamedCounter>& ethtool);

// A port's events from read to read, each the sum of its counters'
// increases. The plain sum of several counters (mlx5 counts one event in
// packet_seq_err and implied_nak_seq_err, a discard in eight priorities)
// dips when one of them cannot be read or is reset, which reads as a reset
// of the event, and then jumps by that counter's whole count, which reads
// as a burst of events that never happened. Here each counter goes on from
// where it was: one missing from a read adds nothing, one that went back
// (the driver zeroed it) adds what it counted since, one seen for the first
// time is a baseline. The first read's events are the plain sums; an event
// none of whose counters was read is left out of that read. Value type;
// not thread-safe.
class EventTotals {
 public:
  PortEvents Update(const PortEventSources& sources);

 private:
  struct Family {
    std::map<std::string, uint64_t> totals;                       // by event
    std::map<std::string, std::map<std::string, uint64_t>> last;  // by event, by counter
  };
  static std::map<std::string, uint64_t> Fold(const EventSources& sources, Family& family);
  Family transport_, congestion_, lossless_, fec_, phy_;
};

// The transport family alone.
std::map<std::string, uint64_t> TransportEvents(const std::vector<os::NamedCounter>& hw_counters,
                                                const std::vector<os::NamedCounter>& ethtool);

}  // namespace rocenet::inventory
