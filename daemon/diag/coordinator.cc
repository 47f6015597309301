// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/coordinator.h"

#include <utility>

#include "daemon/diag/coordinator_util.h"

namespace rocenet::diag {

Coordinator::Coordinator(CoordinatorParts parts) : parts_(std::move(parts)) {}

std::vector<absl::StatusOr<peer::PeerInfo>> Coordinator::Infos(
    const std::vector<NodeAddress>& nodes, CallGroup& stop) {
  std::vector<absl::StatusOr<peer::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  const absl::Time deadline = Now() + coordinator::kInfoTimeout;
  coordinator::ParallelFor(nodes.size(), [&](size_t i) {
    peer::PeerRequest request{.kind = peer::PeerInfoRequest{}};
    absl::StatusOr<peer::PeerReply> reply = parts_.peers->Call(nodes[i], request, deadline, &stop);
    if (reply.ok()) {
      infos[i] = std::move(reply->info);
    } else {
      infos[i] = reply.status();
    }
  });
  return infos;
}

std::vector<CounterRead> Coordinator::ReadCounters(const std::vector<NodeAddress>& nodes,
                                                   bool local, CallGroup& stop) {
  const size_t first = local ? 1 : 0;
  std::vector<CounterRead> reads(first + nodes.size());
  const absl::Time deadline = Now() + coordinator::kInfoTimeout;
  coordinator::ParallelFor(reads.size(), [&](size_t i) {
    CounterRead& read = reads[i];
    if (i < first) {
      read.node = parts_.node_name;
      if (parts_.counters == nullptr) {
        read.ports = absl::UnimplementedError("its counters are not read here");
      } else {
        read.ports = parts_.counters();
      }
      return;
    }
    const NodeAddress& node = nodes[i - first];
    read.node = node.ToString();
    peer::PeerRequest request{.kind = peer::CountersRequest{}};
    absl::StatusOr<peer::PeerReply> reply = parts_.peers->Call(node, request, deadline, &stop);
    if (!reply.ok()) {
      read.ports = reply.status();
    } else if (!reply->error.empty()) {
      read.ports = absl::UnavailableError(reply->error);
    } else {
      if (!reply->counters.node.empty()) read.node = reply->counters.node;
      read.ports = std::move(reply->counters.ports);
    }
  });
  return reads;
}

template <typename Result, typename Test>
absl::StatusOr<Result> Coordinator::Counted(const std::vector<NodeAddress>& nodes, bool local,
                                            CallGroup* stop, Test test) {
  // A run nobody can stop still has a group for its calls to join.
  CallGroup unstoppable;
  CallGroup& group = stop != nullptr ? *stop : unstoppable;
  const std::vector<CounterRead> before = ReadCounters(nodes, local, group);
  absl::StatusOr<Result> result = test(group);
  if (group.abandoned()) return coordinator::Stopped();
  if (!result.ok()) return result;
  result->counters = CompareCounters(before, ReadCounters(nodes, local, group));
  return result;
}

absl::StatusOr<ReachResult> Coordinator::Reach(const ReachRequest& request,
                                               const Progress& progress, CallGroup* stop) {
  return Counted<ReachResult>(coordinator::ParseNodes(request.nodes), request.nodes.empty(), stop,
                              [&](CallGroup& group) { return RunReach(request, progress, group); });
}

absl::StatusOr<BandwidthResult> Coordinator::Bandwidth(const BandwidthRequest& request,
                                                       const Progress& progress, CallGroup* stop) {
  const bool pairs = !request.nodes.empty();
  return Counted<BandwidthResult>(
      coordinator::ParseNodes(pairs ? request.nodes : std::vector<std::string>{request.peer}), true,
      stop, [&](CallGroup& group) {
        return pairs ? RunBandwidthPairs(request, progress, group)
                     : RunBandwidth(request, progress, group);
      });
}

absl::StatusOr<AllreduceResult> Coordinator::Allreduce(const AllreduceRequest& request,
                                                       const Progress& progress, CallGroup* stop) {
  return Counted<AllreduceResult>(
      coordinator::ParseNodes(request.nodes), false, stop,
      [&](CallGroup& group) { return RunAllreduce(request, progress, group); });
}

absl::StatusOr<IncastResult> Coordinator::Incast(const IncastRequest& request,
                                                 const Progress& progress, CallGroup* stop) {
  return Counted<IncastResult>(
      coordinator::ParseNodes(request.senders), true, stop,
      [&](CallGroup& group) { return RunIncast(request, progress, group); });
}

absl::StatusOr<RdmaResult> Coordinator::Rdma(const RdmaRequest& request, const Progress& progress,
                                             CallGroup* stop) {
  const bool link = !request.port.empty();
  return Counted<RdmaResult>(
      coordinator::ParseNodes(link ? std::vector<std::string>{request.peer} : request.nodes), link,
      stop, [&](CallGroup& group) { return RunRdma(request, progress, group); });
}

}  // namespace rocenet::diag
