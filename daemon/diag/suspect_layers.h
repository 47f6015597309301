// SPDX-License-Identifier: Apache-2.0
// The reading behind AnalyzePlannedReach (suspects.h), one kind of failure
// at a time, each over the probes the ones before it left unexplained:
//
//   1. dead: the probes of which no small echo answered; a port, leaf,
//      leaf's uplink or rail they all share (FindSuspects with kDead);
//   2. mtu: of the probes whose small echoes answered, those of which no
//      full-size echo (the port's MTU, Don't Fragment) did: the same
//      levels, kinds "port-mtu" ... "rail-mtu" (kMtu);
//   3. loss: the probes that lost a share of their echoes: a port whose
//      probes, from and to it, lose what its partners' other probes do not
//      (FindLossyPorts).
//
// A probe touching a node whose daemon did not answer is never read: it
// says nothing about the ports at either end. Internal to the diag library;
// pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "daemon/diag/messages.h"
#include "daemon/diag/plan.h"

namespace rocenet::diag::suspects {

// A probe's target when it is the probing port's gateway.
inline constexpr uint32_t kGateway = std::numeric_limits<uint32_t>::max();
// A port is lossy when its probes lose at least this share of their echoes
// (small and full-size together) ...
inline constexpr double kLossyPortMinLoss = 0.05;
// ... with at least this many partners (ports, or its gateway) that lost
// echoes to or from it: one bad partner is that partner's fault.
inline constexpr int kLossyPortMinPartners = 2;

// One planned probe as the analysis reads it.
struct Probe {
  uint32_t from = 0;
  // A plan port, or kGateway.
  uint32_t to = kGateway;
  // What the probing node listed; null when it listed nothing for it (a
  // peer that answered every echo, or a port that probed nothing).
  const ReachTarget* target = nullptr;
  // No small echo answered (or the port could not probe at all).
  bool failed = false;
  // Full-size echoes were sent, and (of a probe that did not fail) none
  // answered.
  bool full_probed = false;
  bool full_failed = false;
  // The share of its echoes lost, small and full-size together.
  double loss = 0;
  // A suspect found so far explains it.
  bool explained = false;
};

// Which failures a pass of FindSuspects reads, and the words it names them
// with.
enum class Layer { kDead, kMtu };

// The port, leaf, leaf-uplink and rail suspects of `layer` over the probes
// that are not yet explained (and, for kMtu, did not fail), in that order;
// marks the probes they explain. `suspect_ports` gets the ports the layer
// found dead (every counted probe from and to them failed).
std::vector<Suspect> FindSuspects(const Plan& plan, Layer layer, std::vector<Probe>& probes,
                                  std::vector<bool>* suspect_ports);

// The lossy ports among the probes not yet explained, the worst first;
// marks the probes they explain.
std::vector<Suspect> FindLossyPorts(const Plan& plan, std::vector<Probe>& probes);

}  // namespace rocenet::diag::suspects
