// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/rdma_counters.h"

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

void Add(const std::vector<os::NamedCounter>& counters, const Mapping* table, size_t size,
         std::map<std::string, uint64_t>& out) {
  for (const auto& [name, value] : counters) {
    for (size_t i = 0; i < size; ++i) {
      if (table[i].counter == name) out[std::string(table[i].event)] += value;
    }
  }
}

}  // namespace

std::map<std::string, uint64_t> TransportEvents(const std::vector<os::NamedCounter>& hw_counters,
                                                const std::vector<os::NamedCounter>& ethtool) {
  std::map<std::string, uint64_t> out;
  Add(hw_counters, kHwCounters, std::size(kHwCounters), out);
  Add(ethtool, kEthtool, std::size(kEthtool), out);
  return out;
}

}  // namespace rocenet::inventory
