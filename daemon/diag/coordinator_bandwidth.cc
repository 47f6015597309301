// SPDX-License-Identifier: Apache-2.0
// Coordinator::Bandwidth: one link, both ways.
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/stage.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

absl::StatusOr<BandwidthResult> Coordinator::RunBandwidth(const BandwidthRequest& request,
                                                          const Progress& progress) {
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
  const double link = static_cast<double>(port->speed_mbps) * 1e6;
  result.link_bits_per_second = link;
  result.stage = EthernetStage(*port);
  const bool check_rate =
      LinkRateApplies(*port, request.min_fraction, request.force_link_rate, &result.stage);
  const absl::Duration duration = absl::Milliseconds(request.duration_ms);
  for (const char* direction : {"transmit", "receive"}) {
    const bool transmit = std::string(direction) == "transmit";
    progress(absl::StrCat(direction, ": ", request.streams, " streams for ",
                          absl::FormatDuration(duration)),
             transmit ? 0 : 0.5);
    std::vector<StreamResult> streams(request.streams);
    ParallelFor(streams.size(), [&](size_t i) {
      streams[i] = transmit ? parts_.local->Send(*port, peer.address, peer.port, duration)
                            : parts_.local->Receive(*port, peer.address, peer.port, duration);
      streams[i].index = static_cast<uint32_t>(i);
    });
    DirectionResult* d = &result.directions.emplace_back();
    d->direction = direction;
    for (const StreamResult& s : streams) {
      d->bits_per_second = d->bits_per_second + s.bits_per_second;
      d->bytes = d->bytes + s.bytes;
      d->retransmits = d->retransmits + s.retransmits;
      if (!s.error.empty()) {
        result.problems.push_back(absl::StrCat(direction, " stream ", s.index, ": ", s.error));
      }
      d->streams.push_back(s);
    }
    if (link > 0) d->fraction_of_link = d->bits_per_second / link;
    if (d->bits_per_second <= 0) {
      result.problems.push_back(absl::StrCat(direction, ": no data got through"));
    } else if (check_rate && d->fraction_of_link < request.min_fraction) {
      result.problems.push_back(absl::StrFormat("%s: %.2f Gb/s is %.0f%% of the link's %.0f Gb/s",
                                                direction, d->bits_per_second / 1e9,
                                                d->fraction_of_link * 100, link / 1e9));
    }
  }
  result.ok = result.problems.empty();
  Verdict verdict(kEthernetStage, result.ok,
                  absl::StrCat(port->name, " <-> ", peer.ToString(), ": ",
                               coordinator::FirstProblem(result.problems)),
                  {{parts_.node_name, NodeAddress{}}, {peer.ToString(), peer}});
  // The link failed: both of its ends are in doubt.
  if (!result.ok) verdict.failed = {parts_.node_name, peer.ToString()};
  Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
