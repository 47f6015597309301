// SPDX-License-Identifier: Apache-2.0
// Reading a planned reach run (plan.h): which probes failed, and what
// explains them, the narrowest first (docs/diagnostics.md#suspects):
//
//   port         every probe from and to the port failed, its gateway's
//                included (at least one probe);
//   leaf         every port cabled to the leaf is a port suspect (two or
//                more), which then are not listed one by one;
//   leaf-uplink  the leaf's ports reach each other but no probe across
//                leaves, to or from them, answered;
//   rail         every port of the rail is a suspect (two or more);
//   port-mtu, leaf-mtu, leaf-uplink-mtu, rail-mtu
//                the same read from the full-size echoes (the port's MTU,
//                Don't Fragment) of the probes whose small echoes answered:
//                a path whose MTU is smaller than the ports';
//   lossy-port   the port's probes, from and to it, lost a share of their
//                echoes (suspect_layers.h: kLossyPortMinLoss, with at least
//                kLossyPortMinPartners partners) that its partners' other
//                probes did not.
//
// A node whose daemon did not answer is not tested (ReachResult.not_tested,
// with why): no suspect, and the probes to its ports are not read, so
// nothing is blamed on its ports, leaf or rail. The nodes report their
// probes reduced or in full (ReachRequest.matrix): a peer target a node
// lists lost an echo, small or full-size; one it does not list answered
// every one. Pure functions, thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/diag/messages.h"
#include "daemon/diag/plan.h"

namespace rocenet::diag {

// Fills result->unreachable, suspects, suspect_details, not_tested and ok
// from `plan` and result->ports (the probing ports' reports, each naming
// its node as in the plan's ports). `silent`: the nodes (indexes) that did
// not report, with why; `node_names` names every node of the run by index.
void AnalyzePlannedReach(const Plan& plan, const std::vector<std::string>& node_names,
                         const std::map<size_t, std::string>& silent, ReachResult* result);

// The node names the suspects of `result` concern: a port's node, every
// node with a port on a suspect leaf or rail; never a node not tested.
std::set<std::string> NodesOfSuspects(const Plan& plan, const ReachResult& result);

// Keeps, in each port's targets, the gateway and the peers that lost an
// echo (small or full-size) or were not reached, after filling the port's figures over all its
// peers (PortReach.peers_*) when the prober left them unset. What a node
// returns for a run without `matrix`.
void ReduceToFailures(std::vector<PortReach>* ports);

}  // namespace rocenet::diag
