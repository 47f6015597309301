// SPDX-License-Identifier: Apache-2.0
// Coordinator::Bandwidth: one link, both ways.
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/stage.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

absl::StatusOr<v1::BandwidthResult> Coordinator::Bandwidth(const v1::BandwidthRequest& request,
                                                          const Progress& progress) {
  absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
  if (!local.ok()) return local.status();
  ASSIGN_OR_RETURN(const LocalPort* port, PortNamed(*local, request.port()));
  const NodeAddress peer = *ParseNodeAddress(request.peer());
  RETURN_IF_ERROR(coordinator::CheckPeerInRail(*port, peer));
  v1::BandwidthResult result;
  result.set_node(parts_.node_name);
  result.set_port(port->name);
  result.set_local_address(port->address.ToString());
  result.set_peer(peer.ToString());
  const double link = static_cast<double>(port->speed_mbps) * 1e6;
  result.set_link_bits_per_second(link);
  *result.mutable_stage() = EthernetStage(*port);
  const bool check_rate = LinkRateApplies(*port, request.min_fraction(),
                                          request.force_link_rate(), result.mutable_stage());
  const absl::Duration duration = absl::Milliseconds(request.duration_ms());
  for (const char* direction : {"transmit", "receive"}) {
    const bool transmit = std::string(direction) == "transmit";
    progress(absl::StrCat(direction, ": ", request.streams(), " streams for ",
                          absl::FormatDuration(duration)),
             transmit ? 0 : 0.5);
    std::vector<v1::StreamResult> streams(request.streams());
    ParallelFor(streams.size(), [&](size_t i) {
      streams[i] = transmit ? parts_.local->Send(*port, peer.address, peer.port, duration)
                            : parts_.local->Receive(*port, peer.address, peer.port, duration);
      streams[i].set_index(static_cast<uint32_t>(i));
    });
    v1::DirectionResult* d = result.add_directions();
    d->set_direction(direction);
    for (const v1::StreamResult& s : streams) {
      d->set_bits_per_second(d->bits_per_second() + s.bits_per_second());
      d->set_bytes(d->bytes() + s.bytes());
      d->set_retransmits(d->retransmits() + s.retransmits());
      if (!s.error().empty()) {
        result.add_problems(absl::StrCat(direction, " stream ", s.index(), ": ", s.error()));
      }
      *d->add_streams() = s;
    }
    if (link > 0) d->set_fraction_of_link(d->bits_per_second() / link);
    if (d->bits_per_second() <= 0) {
      result.add_problems(absl::StrCat(direction, ": no data got through"));
    } else if (check_rate && d->fraction_of_link() < request.min_fraction()) {
      result.add_problems(absl::StrFormat("%s: %.2f Gb/s is %.0f%% of the link's %.0f Gb/s",
                                          direction, d->bits_per_second() / 1e9,
                                          d->fraction_of_link() * 100, link / 1e9));
    }
  }
  result.set_ok(result.problems().empty());
  Announce(Verdict(kEthernetStage, result.ok(),
                   absl::StrCat(port->name, " <-> ", peer.ToString(), ": ",
                                coordinator::FirstProblem(result.problems())),
                   {{parts_.node_name, NodeAddress{}}, {peer.ToString(), peer}}));
  return result;
}

}  // namespace rocenet::diag
