// SPDX-License-Identifier: Apache-2.0
// Coordinator: the tests rocectl asks for (rocenet.v1.Diagnostics), run
// from this node across the others. It learns the other daemons' ports,
// hands each its part over the PeerChannel, runs its own part through
// LocalTests and puts the results together: one file per test
// (coordinator_reach.cc, _bandwidth, _allreduce, _incast).
//
// Requests must be normalized (limits.h). Every method is thread-safe and
// returns within its request's time bound plus a few seconds for replies.
// Errors that concern a node, port or link are reported in the result; a
// returned error means the test could not run at all (NotFound for an
// unknown local port, InvalidArgument for a peer outside the port's rail,
// FailedPrecondition for an incast with the data port off).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diag/peers.h"
#include "daemon/os/clock.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::diag {

struct CoordinatorParts {
  // Not owned; must outlive the coordinator.
  PeerChannel* peers = nullptr;
  LocalTests* local = nullptr;
  const os::Clock* clock = nullptr;
  PortsSource ports;
  // This node's name in results, and its data port (0: off).
  std::string node_name;
  uint16_t data_port = 0;
};

class Coordinator {
 public:
  explicit Coordinator(CoordinatorParts parts);

  absl::StatusOr<v1::ReachResult> Reach(const v1::ReachRequest& request,
                                        const Progress& progress);
  absl::StatusOr<v1::BandwidthResult> Bandwidth(const v1::BandwidthRequest& request,
                                                const Progress& progress);
  absl::StatusOr<v1::AllreduceResult> Allreduce(const v1::AllreduceRequest& request,
                                                const Progress& progress);
  absl::StatusOr<v1::IncastResult> Incast(const v1::IncastRequest& request,
                                          const Progress& progress);

 private:
  absl::Time Now() const { return parts_.clock->Now(); }
  // Every node's ports, asked at once; an error names the node.
  std::vector<absl::StatusOr<v1::PeerInfo>> Infos(const std::vector<NodeAddress>& nodes);
  // From this node's own ports only.
  absl::StatusOr<v1::ReachResult> LocalReach(const v1::ReachRequest& request,
                                             const Progress& progress);

  CoordinatorParts parts_;
};

}  // namespace rocenet::diag
