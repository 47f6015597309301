// SPDX-License-Identifier: Apache-2.0
// The plan of a mesh-mode reach run: which port probes which, decided by
// the coordinator before the run from the ports every node reported
// (docs/diagnostics.md#plans).
//
//   mesh          every port probes every other node's port of its rail:
//                 n(n-1) probes a rail; for runs of up to kMaxMeshNodes.
//   rings         per rail, the ports in order of leaf then node, each
//                 probing the ports 1 and s after it (s coprime with the
//                 rail's port count, so both are rings through every port):
//                 every port has four distinct peers, two it probes and two
//                 that probe it, so one bad port fails all four while each
//                 of its peers fails one in four; 2n probes a rail.
//   rings+leaves  rings, and where the ports' LLDP neighbors show two or
//                 more leaf switches on a rail, a mesh within each leaf and
//                 kLeafRepresentatives ports of each leaf meshed with those
//                 of the other leaves: a leaf that fails, or that reaches
//                 nothing beyond itself, shows as that leaf.
//
// A port probes only addresses inside its routed network, so an edge is
// planned only where the network of its source holds its target. Pure
// functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/messages.h"

namespace rocenet::diag {

inline constexpr int kMaxMeshNodes = 64;
inline constexpr int kLeafRepresentatives = 2;
// The most peers one port is asked to probe: one node's share of a run.
inline constexpr int kMaxPeersPerPort = 128;

// A port taking part: of node `node` (an index into the run's nodes).
struct PlanPort {
  size_t node = 0;
  std::string node_name;
  std::string port;
  Ipv4Address address;
  Ipv4Prefix network;
  std::string rail;
  // The leaf switch it is cabled to; empty when unknown.
  std::string leaf;
};

// `from` probes `to`, both indexes into Plan::ports.
struct PlanEdge {
  uint32_t from = 0;
  uint32_t to = 0;
  bool operator==(const PlanEdge&) const = default;
  auto operator<=>(const PlanEdge&) const = default;
};

struct Plan {
  ReachPlan summary;
  std::vector<PlanPort> ports;
  // Sorted, without duplicates.
  std::vector<PlanEdge> edges;
  // Per node (as PlanPort::node): the addresses its ports probe.
  std::vector<std::vector<std::string>> targets;
};

// The plan for `ports` of `nodes` nodes. `kind`: "" or "auto" (mesh up to
// kMaxMeshNodes nodes, else rings), "mesh" or "rings". InvalidArgument for
// another kind, or a mesh beyond kMaxMeshNodes nodes, naming the field.
absl::StatusOr<Plan> MakePlan(std::vector<PlanPort> ports, size_t nodes, absl::string_view kind);

// The ring stride for n ports: the smallest s >= max(2, round(sqrt(n))),
// coprime with n, with s != n-1 and 2s != n; 0 when n < 5 (no such s, the
// rail is meshed instead).
uint32_t RingStride(uint32_t n);

}  // namespace rocenet::diag
