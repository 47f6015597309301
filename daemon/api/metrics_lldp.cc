// SPDX-License-Identifier: Apache-2.0
// The LLDP metric families (docs/metrics.md). Counters come from the agent's
// per-port receive counters and the neighbor table, both in the snapshot.
#include <string>

#include "daemon/api/metric_families.h"
#include "daemon/lldp/decode_error.h"

namespace rocenet::api::metrics_internal {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// What the neighbor_info labels show of a string TLV sent more than once: the
// first, as the neighbor sent them in order; the API has them all.
std::string First(const std::vector<std::string>& values) {
  return values.empty() ? std::string() : values.front();
}

}  // namespace

void AppendLldpMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily received =
      Family("rocenet_lldp_frames_received_total",
             "LLDP frames received on the port, accepted or not.", MetricType::Counter);
  // 20 reasons for every port of 500 nodes would be mostly zeros; a reason
  // gets its series when its first frame is discarded.
  MetricFamily discarded = Family(
      "rocenet_lldp_frames_discarded_total",
      "LLDP frames discarded as malformed, by reason; only reasons that occurred are listed.",
      MetricType::Counter);
  // The agent decodes a frame only when it differs from the neighbor's last
  // one, so the TLV counters count per decoded LLDPDU, not per frame.
  MetricFamily tlvs_discarded = Family("rocenet_lldp_tlvs_discarded_total",
                                       "Malformed optional TLVs dropped from otherwise valid "
                                       "LLDPDUs; identical repeated frames are not counted again.",
                                       MetricType::Counter);
  MetricFamily tlvs_unrecognized =
      Family("rocenet_lldp_tlvs_unrecognized_total",
             "TLVs of reserved types and organizationally specific TLVs not decoded, in LLDPDUs; "
             "identical repeated frames are not counted again.",
             MetricType::Counter);
  MetricFamily socket_errors =
      Family("rocenet_lldp_socket_errors_total", "Errors receiving on the port's LLDP socket.",
             MetricType::Counter);
  MetricFamily ageouts =
      Family("rocenet_lldp_ageouts_total", "LLDP neighbors forgotten because their TTL ran out.",
             MetricType::Counter);
  MetricFamily neighbors = Family(
      "rocenet_lldp_neighbors",
      "LLDP neighbors the port hears now; 1 is the switch, more means something sits between.",
      MetricType::Gauge);
  MetricFamily info =
      Family("rocenet_lldp_neighbor_info", "Identity of each LLDP neighbor of each port; always 1.",
             MetricType::Gauge);

  static const lldp::PortLldpCounters kNone;
  // Every managed port gets its series from the start, so the first frame
  // is an increase rate() can see.
  for (const inventory::Port& port : snapshot.ports) {
    auto found = snapshot.lldp_counters.find(port.id);
    const lldp::PortLldpCounters& counters =
        found == snapshot.lldp_counters.end() ? kNone : found->second;
    const std::vector<prometheus::ClientMetric::Label> device = {{"device", port.name}};
    AddSample(received, device, static_cast<double>(counters.frames_received));
    for (size_t i = 0; i < lldp::kNumDecodeErrors; ++i) {
      if (counters.frames_discarded[i] == 0) continue;
      const std::string reason(lldp::ReasonLabel(static_cast<lldp::DecodeError>(i)));
      AddSample(discarded, {{"device", port.name}, {"reason", reason}},
                static_cast<double>(counters.frames_discarded[i]));
    }
    AddSample(tlvs_discarded, device, static_cast<double>(counters.tlvs_discarded));
    AddSample(tlvs_unrecognized, device, static_cast<double>(counters.tlvs_unrecognized));
    AddSample(socket_errors, device, static_cast<double>(counters.socket_errors));

    auto heard = snapshot.neighbors.find(port.id);
    if (heard == snapshot.neighbors.end()) {
      AddSample(ageouts, device, 0);
      AddSample(neighbors, device, 0);
      continue;
    }
    const lldp::PortNeighbors& table = heard->second;
    AddSample(ageouts, device, static_cast<double>(table.ageouts));
    AddSample(neighbors, device, static_cast<double>(table.neighbors.size()));
    for (const lldp::Neighbor& neighbor : table.neighbors) {
      const lldp::Lldpdu& pdu = neighbor.lldpdu;
      AddSample(info,
                {{"device", port.name},
                 {"chassis_id", pdu.chassis_id.ToString()},
                 {"port_id", pdu.port_id.ToString()},
                 {"system_name", First(pdu.system_names)},
                 {"port_description", First(pdu.port_descriptions)}},
                1);
    }
  }
  for (MetricFamily* family : {&received, &discarded, &tlvs_discarded, &tlvs_unrecognized,
                               &socket_errors, &ageouts, &neighbors, &info}) {
    out->push_back(std::move(*family));
  }
}

}  // namespace rocenet::api::metrics_internal
