// SPDX-License-Identifier: Apache-2.0
// Coordinator::Bandwidth: one link, both ways; the pair form is in
// coordinator_bandwidth_pairs.cc.
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/stage.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

std::vector<DirectionResult> Coordinator::MeasurePair(const BandwidthRequest& request,
                                                      const LocalPort& port,
                                                      const NodeAddress& peer,
                                                      const Progress& progress, double from,
                                                      double share, CallGroup& stop) {
  std::vector<DirectionResult> directions;
  const double link = static_cast<double>(port.speed_mbps) * 1e6;
  const absl::Duration duration = absl::Milliseconds(request.duration_ms);
  for (const char* direction : {"transmit", "receive"}) {
    if (stop.abandoned()) break;
    const bool transmit = std::string(direction) == "transmit";
    progress(absl::StrCat(port.name, " <-> ", peer.ToString(), ": ", direction, ", ",
                          request.streams, " streams for ", absl::FormatDuration(duration)),
             from + (transmit ? 0 : share / 2));
    std::vector<StreamResult> streams(request.streams);
    ParallelFor(streams.size(), [&](size_t i) {
      streams[i] = transmit ? parts_.local->Send(port, peer.address, peer.port, duration, &stop)
                            : parts_.local->Receive(port, peer.address, peer.port, duration, &stop);
      streams[i].index = static_cast<uint32_t>(i);
    });
    DirectionResult* d = &directions.emplace_back();
    d->direction = direction;
    for (const StreamResult& s : streams) {
      d->bits_per_second = d->bits_per_second + s.bits_per_second;
      d->bytes = d->bytes + s.bytes;
      d->retransmits = d->retransmits + s.retransmits;
      d->streams.push_back(s);
    }
    if (link > 0) d->fraction_of_link = d->bits_per_second / link;
  }
  return directions;
}

namespace coordinator {

std::vector<std::string> DirectionProblems(const std::vector<DirectionResult>& directions,
                                           bool check_rate, double min_fraction,
                                           double link_bits_per_second) {
  std::vector<std::string> problems;
  for (const DirectionResult& d : directions) {
    for (const StreamResult& s : d.streams) {
      if (!s.error.empty()) {
        problems.push_back(absl::StrCat(d.direction, " stream ", s.index, ": ", s.error));
      }
    }
    if (d.bits_per_second <= 0) {
      problems.push_back(absl::StrCat(d.direction, ": no data got through"));
    } else if (check_rate && d.fraction_of_link < min_fraction) {
      problems.push_back(absl::StrFormat("%s: %.2f Gb/s is %.0f%% of the link's %.0f Gb/s",
                                         d.direction, d.bits_per_second / 1e9,
                                         d.fraction_of_link * 100, link_bits_per_second / 1e9));
    }
  }
  return problems;
}

}  // namespace coordinator

absl::StatusOr<BandwidthResult> Coordinator::RunBandwidth(const BandwidthRequest& request,
                                                          const Progress& progress,
                                                          CallGroup& stop) {
  absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
  if (!local.ok()) return local.status();
  ASSIGN_OR_RETURN(const LocalPort* port, PortNamed(*local, request.port));
  const NodeAddress peer = *ParseNodeAddress(request.peer);
  RETURN_IF_ERROR(coordinator::CheckPeerInRail(*port, peer));
  BandwidthResult result;
  result.node = parts_.node_name;
  result.port = port->name;
  result.local_address = port->address.ToString();
  result.peer = peer.ToString();
  result.link_bits_per_second = static_cast<double>(port->speed_mbps) * 1e6;
  result.stage = EthernetStage(*port);
  const bool check_rate =
      LinkRateApplies(*port, request.min_fraction, request.force_link_rate, &result.stage);
  result.directions = MeasurePair(request, *port, peer, progress, 0, 1, stop);
  if (stop.abandoned()) return coordinator::Stopped();
  result.problems = coordinator::DirectionProblems(
      result.directions, check_rate, request.min_fraction, result.link_bits_per_second);
  result.ok = result.problems.empty();
  Verdict verdict(kEthernetStage, result.ok,
                  absl::StrCat(port->name, " <-> ", peer.ToString(), ": ",
                               coordinator::FirstProblem(result.problems)),
                  {{parts_.node_name, NodeAddress{}}, {peer.ToString(), peer}});
  verdict.max_failed =
      MaxUnvalidated(request.max_unvalidated_nodes, request.max_unvalidated_fraction, 2);
  // The link failed: both of its ends are in doubt.
  if (!result.ok) verdict.failed = {parts_.node_name, peer.ToString()};
  result.labels = Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
