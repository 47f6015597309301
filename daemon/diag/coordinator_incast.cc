// SPDX-License-Identifier: Apache-2.0
// Coordinator::Incast: many senders into one port.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/stage.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {

using coordinator::kReplySlack;
using coordinator::NameOf;
using coordinator::ParallelFor;
using coordinator::ParseNodes;

absl::StatusOr<IncastResult> Coordinator::RunIncast(const IncastRequest& request,
                                                    const Progress& progress, CallGroup& stop) {
  absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
  if (!local.ok()) return local.status();
  ASSIGN_OR_RETURN(const LocalPort* port, PortNamed(*local, request.port));
  if (parts_.data_port == 0) {
    return absl::FailedPreconditionError(
        "the data port is off (--diag_port=0): nothing to receive on");
  }
  const LocalPort receiver = *port;
  IncastResult result;
  result.node = parts_.node_name;
  result.port = receiver.name;
  result.address = receiver.address.ToString();
  result.link_bits_per_second = static_cast<double>(receiver.speed_mbps) * 1e6;
  result.stage = EthernetStage(receiver);
  const std::vector<NodeAddress> nodes = ParseNodes(request.senders);
  const std::vector<absl::StatusOr<peer::PeerInfo>> infos = Infos(nodes, stop);
  if (stop.abandoned()) return coordinator::Stopped();
  progress(absl::StrCat(nodes.size(), " senders to ", receiver.name, " for ", request.duration_ms,
                        " ms"),
           0.1);
  std::vector<absl::StatusOr<peer::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) {
      replies[i] = infos[i].status();
      return;
    }
    const peer::PeerRequest send{
        .kind = peer::SendRequest{.address = receiver.address.address().ToString(),
                                  .data_port = parts_.data_port,
                                  .duration_ms = request.duration_ms,
                                  .streams = request.streams}};
    replies[i] = parts_.peers->Call(
        nodes[i], send,
        Now() + absl::Milliseconds(request.duration_ms) + kTrafficSlack + kReplySlack, &stop);
  });
  if (stop.abandoned()) return coordinator::Stopped();
  std::vector<double> rates;
  for (size_t i = 0; i < nodes.size(); ++i) {
    IncastSender* sender = &result.senders.emplace_back();
    sender->node = NameOf(infos[i], nodes[i]);
    if (!replies[i].ok()) {
      sender->error = std::string(replies[i].status().message());
    } else {
      const peer::SendReport& report = replies[i]->send;
      sender->port = report.port;
      sender->address = report.source_address;
      sender->bytes = report.bytes;
      sender->bits_per_second = BitsPerSecond(report.bytes, report.seconds);
      sender->retransmits = report.retransmits;
      sender->error = report.error;
    }
    if (!sender->error.empty()) {
      result.problems.push_back(absl::StrCat("sender ", sender->node, ": ", sender->error));
    }
    rates.push_back(sender->bits_per_second);
    result.total_bits_per_second = result.total_bits_per_second + sender->bits_per_second;
    result.retransmits = result.retransmits + sender->retransmits;
  }
  result.fairness = JainIndex(rates);
  if (absl::StatusOr<std::vector<LocalPort>> after = parts_.ports(); after.ok()) {
    if (const LocalPort* p = FindPortByName(*after, receiver.name); p != nullptr) {
      result.receive_drops = p->rx_dropped - std::min(p->rx_dropped, receiver.rx_dropped);
    }
  }
  result.ok = result.problems.empty();
  Verdict verdict(kEthernetStage, result.ok, coordinator::FirstProblem(result.problems),
                  {{parts_.node_name, NodeAddress{}}});
  for (size_t i = 0; i < nodes.size(); ++i) {
    verdict.nodes.emplace_back(result.senders[i].node, nodes[i]);
    if (!result.senders[i].error.empty()) {
      verdict.failed.insert(result.senders[i].node);
    }
  }
  Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
