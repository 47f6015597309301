// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the files that build rocenetd's metric families
// (metrics.cc and metrics_*.cc); internal to
// daemon/api. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/node/snapshot.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"

namespace rocenet::api::metrics_internal {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type);

// Appends a sample with `labels` to a counter or gauge family. Label values
// are made valid UTF-8 here, once for all families: a single invalid byte
// (an LLDP string can hold any) would make Prometheus reject the whole
// scrape.
void AddSample(prometheus::MetricFamily& family,
               std::vector<prometheus::ClientMetric::Label> labels, double value);

// The LLDP families, one series per managed port (label `device`) except
// rocenet_lldp_neighbor_info (one per neighbor) and
// rocenet_lldp_frames_discarded_total (one per port and reason seen).
void AppendLldpMetrics(const node::NodeSnapshot& snapshot,
                       std::vector<prometheus::MetricFamily>* out);

// The addressing families, one series per port with a plan.
void AppendAddressingMetrics(const node::NodeSnapshot& snapshot,
                             std::vector<prometheus::MetricFamily>* out);

// The health families: rocenet_port_condition, one series per port and
// condition type, and when each condition that holds began.
void AppendHealthMetrics(const node::NodeSnapshot& snapshot,
                         std::vector<prometheus::MetricFamily>* out);

// The MAC counter families (ethtool statistics), one series per port whose
// driver has the counter.
void AppendMacMetrics(const node::NodeSnapshot& snapshot,
                      std::vector<prometheus::MetricFamily>* out);

// The PFC families, one series per port and priority where dcbnl (or, for
// the pause counters, the driver's ethtool statistics) reports them.
void AppendPfcMetrics(const node::NodeSnapshot& snapshot,
                      std::vector<prometheus::MetricFamily>* out);

// The RDMA families, one series per RDMA port (state) and per hw_counters
// entry.
void AppendRdmaMetrics(const node::NodeSnapshot& snapshot,
                       std::vector<prometheus::MetricFamily>* out);

// The driver event families (transport, congestion, lossless, FEC, PHY),
// one series per port and event its driver counts.
void AppendEventMetrics(const node::NodeSnapshot& snapshot,
                        std::vector<prometheus::MetricFamily>* out);

// The transceiver families: temperature, voltage and each lane's powers
// and bias, for ports whose module the driver reads.
void AppendModuleMetrics(const node::NodeSnapshot& snapshot,
                         std::vector<prometheus::MetricFamily>* out);

// The attachment families: calls by operation and result, and the latency
// histogram by operation.
void AppendAttachMetrics(const node::NodeSnapshot& snapshot,
                         std::vector<prometheus::MetricFamily>* out);

}  // namespace rocenet::api::metrics_internal
