// SPDX-License-Identifier: Apache-2.0
// NodeMetrics: the node's state as Prometheus metrics, built at scrape time
// from the node's current snapshot.
//
// A prometheus-cpp Collectable, called on the exposer's thread. It reads
// NodeStateSource::Current(), the view every gRPC reader gets, so metrics
// never disagree with the gRPC API, there is no second copy of the state to
// keep in step, and a scrape costs the node nothing. Naming
// follows node_exporter: `device` label, base units, `_total` on counters,
// text only in `_info` metrics.
#pragma once

#include <string>
#include <vector>

#include "daemon/node/snapshot.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace rocenet::api {

class NodeMetrics final : public prometheus::Collectable {
 public:
  NodeMetrics(node::NodeStateSource* source, std::string version)
      : source_(source), version_(std::move(version)) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  node::NodeStateSource* source_;
  std::string version_;
};

// The families for one snapshot; separate from Collect() so tests need no
// source.
std::vector<prometheus::MetricFamily> BuildMetrics(const node::NodeSnapshot& snapshot,
                                                   const std::string& version);

}  // namespace rocenet::api
