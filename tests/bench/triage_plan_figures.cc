// SPDX-License-Identifier: Apache-2.0
// The reach plan's figures for a fabric of any size, without the fabric:
// the plan rocenet-diagd would make (daemon/diag/plan.h) for N nodes with
// one port on each of R rails, K nodes a leaf, and the size of the result
// rocectl would receive for a healthy run (one summary a port and its
// gateway), reduced and with the full matrix, beside the full mesh's.
//
//   triage_plan_figures --nodes 512 --rails 24 --nodes-per-leaf 32
//
// Prints one JSON object. Exit 2 on a bad flag.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/diag/plan.h"
#include "daemon/diag/wire/convert.h"

namespace rocenet::diag {
namespace {

struct Shape {
  size_t nodes = 512;
  int rails = 24;
  size_t per_leaf = 32;
};

std::vector<PlanPort> Ports(const Shape& shape) {
  std::vector<PlanPort> ports;
  for (size_t i = 0; i < shape.nodes; ++i) {
    for (int r = 0; r < shape.rails; ++r) {
      PlanPort p;
      p.node = i;
      p.node_name = absl::StrFormat("node-%04d", i);
      p.port = absl::StrCat("so", r);
      p.address = Ipv4Address(static_cast<uint32_t>((10u << 24) | ((r & 0xff) << 16) |
                                                    ((i / 64) << 8) | (4 * (i % 64) + 1)));
      p.network =
          *Ipv4Prefix::Make(Ipv4Address(static_cast<uint32_t>((10u << 24) | (r << 16))), 16);
      p.rail = absl::StrCat(r);
      if (shape.per_leaf > 0) p.leaf = absl::StrFormat("leaf-r%02d-%02d", r, i / shape.per_leaf);
      ports.push_back(p);
    }
  }
  return ports;
}

// A healthy run's result: every port with its gateway and figures; with
// `matrix`, every peer it probed too.
size_t ResultBytes(const Plan& plan, bool matrix) {
  ReachResult result;
  result.plan = plan.summary;
  std::vector<std::vector<uint32_t>> out(plan.ports.size());
  for (const PlanEdge& e : plan.edges) out[e.from].push_back(e.to);
  for (uint32_t i = 0; i < plan.ports.size(); ++i) {
    const PlanPort& p = plan.ports[i];
    PortReach port;
    port.node = p.node_name;
    port.port = p.port;
    port.address = absl::StrCat(p.address.ToString(), "/30");
    port.rail = p.rail;
    port.network = p.network.ToString();
    port.leaf = p.leaf;
    port.peers_probed = static_cast<uint32_t>(out[i].size());
    port.peer_rtt_p50_seconds = 41.3e-6;
    port.peer_rtt_p90_seconds = 57.9e-6;
    port.peer_rtt_p99_seconds = 88.1e-6;
    ReachTarget gateway;
    gateway.address = "10.0.0.2";
    gateway.kind = "gateway";
    gateway.sent = gateway.received = 5;
    gateway.rtt_p50_seconds = gateway.rtt_p90_seconds = gateway.rtt_p99_seconds = 30.7e-6;
    gateway.rtt_max_seconds = 31.2e-6;
    gateway.arp_resolved = gateway.reachable = true;
    gateway.arp_mac = "02:00:0a:c9:01:02";
    gateway.arp_rtt_seconds = 25.1e-6;
    port.targets.push_back(gateway);
    if (matrix) {
      for (uint32_t to : out[i]) {
        ReachTarget t = gateway;
        t.kind = "peer";
        t.address = plan.ports[to].address.ToString();
        t.node = plan.ports[to].node_name;
        t.port = plan.ports[to].port;
        t.arp_resolved = false;
        t.arp_mac.clear();
        t.arp_rtt_seconds = 0;
        port.targets.push_back(t);
      }
    }
    result.ports.push_back(std::move(port));
    if (i == 0 || plan.ports[i].node != plan.ports[i - 1].node) result.nodes.push_back(p.node_name);
  }
  result.ok = true;
  return wire::ToProto(result).ByteSizeLong();
}

int Run(int argc, char** argv) {
  Shape shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    uint64_t value = 0;
    if (!absl::SimpleAtoi(argv[i + 1], &value)) {
      std::fprintf(stderr, "triage_plan_figures: %s: not a number\n", flag.c_str());
      return 2;
    }
    if (flag == "--nodes") {
      shape.nodes = value;
    } else if (flag == "--rails") {
      shape.rails = static_cast<int>(value);
    } else if (flag == "--nodes-per-leaf") {
      shape.per_leaf = value;
    } else {
      std::fprintf(stderr, "triage_plan_figures: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (shape.nodes < 2 || shape.nodes > 16384 || shape.rails < 1 || shape.rails > 64 ||
      argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: triage_plan_figures [--nodes 2..16384] [--rails 1..64] "
                 "[--nodes-per-leaf K]\n");
    return 2;
  }
  absl::StatusOr<Plan> plan = MakePlan(Ports(shape), shape.nodes, "auto");
  if (!plan.ok()) {
    std::fprintf(stderr, "triage_plan_figures: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  const uint64_t mesh =
      static_cast<uint64_t>(shape.nodes) * (shape.nodes - 1) * static_cast<uint64_t>(shape.rails);
  size_t max_targets = 0;
  for (const auto& targets : plan->targets) max_targets = std::max(max_targets, targets.size());
  std::printf(
      "{\"nodes\": %zu, \"rails\": %d, \"nodes_per_leaf\": %zu, \"plan\": \"%s\", "
      "\"peer_probes\": %u, \"gateway_probes\": %u, \"max_peers_per_port\": %u, "
      "\"max_targets_per_node\": %zu, \"full_mesh_probes\": %llu, "
      "\"result_bytes\": %zu, \"matrix_result_bytes\": %zu}\n",
      shape.nodes, shape.rails, shape.per_leaf, plan->summary.kind.c_str(),
      plan->summary.peer_probes, plan->summary.gateway_probes, plan->summary.max_peers_per_port,
      max_targets, static_cast<unsigned long long>(mesh), ResultBytes(*plan, false),
      ResultBytes(*plan, true));
  return 0;
}

}  // namespace
}  // namespace rocenet::diag

int main(int argc, char** argv) { return rocenet::diag::Run(argc, argv); }
