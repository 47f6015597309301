// SPDX-License-Identifier: Apache-2.0
// RoCE transport events under one set of names, mapped from each driver's
// own: the RDMA port's hw_counters (rxe, mlx5, bnxt_re) and, on Gaudi,
// whose NIC driver counts them in its ethtool statistics, the PSN counters
// there. A driver without a name for an event has no entry for it. Pure.
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

// The events among `hw_counters` (an RDMA port's, by the driver's names)
// and `ethtool` (the net device's statistics), each the sum of the
// counters that map to it.
std::map<std::string, uint64_t> TransportEvents(const std::vector<os::NamedCounter>& hw_counters,
                                                const std::vector<os::NamedCounter>& ethtool);

}  // namespace rocenet::inventory
