// SPDX-License-Identifier: Apache-2.0
// The addressing metric families (docs/metrics.md): whether each port is
// provisioned, its plan, whether applying it failed, and how often it had
// to be set up.
#include <string>

#include "daemon/api/metric_families.h"
#include "daemon/api/plan_convert.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendAddressingMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily provisioned =
      Family("rocenet_port_provisioned",
             "Whether rocenet's configuration (addresses, routes, MTU) is complete on the port.",
             MetricType::Gauge);
  MetricFamily plan =
      Family("rocenet_addressing_plan_info",
             "The port's addressing plan from LLDP: state, reason when pending or refused, local "
             "address and peer; always 1.",
             MetricType::Gauge);
  // A state, not a count: whether the port is failing now. How often it
  // failed shows in the history of this gauge and of rocenet_port_condition.
  MetricFamily failed =
      Family("rocenet_port_addressing_failed",
             "Whether the last attempt to apply the port's plan failed (1) or succeeded (0).",
             MetricType::Gauge);
  MetricFamily set_up =
      Family("rocenet_port_link_set_up_total",
             "Times rocenetd found the port administratively down and set it up: drivers "
             "register ports down, and a port set down by hand is brought back.",
             MetricType::Counter);
  for (const addressing::PortAddressing& port : snapshot.addressing) {
    const addressing::AddressPlan& p = port.plan;
    AddSample(provisioned, {{"device", port.name}}, port.provisioned ? 1 : 0);
    AddSample(plan,
              {{"device", port.name},
               {"state", std::string(addressing::PlanStateName(p.state))},
               {"reason", p.reason},
               {"local", p.local.has_value() ? p.local->ToString() : ""},
               {"peer", p.peer.has_value() ? p.peer->ToString() : ""}},
              1);
    AddSample(failed, {{"device", port.name}}, port.apply_error.empty() ? 0 : 1);
    AddSample(set_up, {{"device", port.name}}, static_cast<double>(port.links_set_up));
  }
  out->push_back(std::move(provisioned));
  out->push_back(std::move(plan));
  out->push_back(std::move(failed));
  out->push_back(std::move(set_up));
}

}  // namespace rocenet::api::metrics_internal
