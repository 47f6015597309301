// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/agent.h"

#include <set>

#include "daemon/lldp/codec.h"

namespace rocenet::lldp {
namespace {

// Frames read per wake-up of one port; the rest wait for the next turn of
// the loop so a flooded port cannot starve the others.
constexpr size_t kFramesPerBatch = 64;

}  // namespace

LldpAgent::LldpAgent(os::PacketSocketFactory* sockets, os::Reactor* reactor, const os::Clock* clock,
                     ChangeCallback on_change)
    : sockets_(sockets), reactor_(reactor), clock_(clock), on_change_(std::move(on_change)) {}

LldpAgent::~LldpAgent() {
  for (auto& [id, listener] : listeners_) reactor_->RemoveReader(listener.socket->fd());
}

std::vector<std::pair<std::string, absl::Status>> LldpAgent::SyncPorts(
    const std::vector<AgentPort>& ports) {
  std::vector<std::pair<std::string, absl::Status>> failures;
  std::map<std::string, const AgentPort*> wanted;
  for (const AgentPort& port : ports) wanted[port.port_id] = &port;

  std::vector<std::string> forgotten;
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    auto w = wanted.find(it->first);
    if (w != wanted.end() && w->second->ifindex == it->second.port.ifindex &&
        w->second->netns == it->second.port.netns) {
      it->second.port = *w->second;  // a new MAC or name needs no new socket
      ++it;
      continue;
    }
    reactor_->RemoveReader(it->second.socket->fd());
    if (w == wanted.end()) {
      table_.ForgetPort(it->first);
      counters_.erase(it->first);
      forgotten.push_back(it->first);
    }
    it = listeners_.erase(it);
  }
  for (const AgentPort& port : ports) {
    if (listeners_.contains(port.port_id)) continue;
    os::PacketSocketFactory* factory = port.factory != nullptr ? port.factory : sockets_;
    absl::StatusOr<std::unique_ptr<os::PacketSocket>> socket =
        factory->OpenLldp(port.ifindex, port.ifname);
    if (!socket.ok()) {
      failures.emplace_back(port.port_id, socket.status());
      continue;
    }
    const int fd = (*socket)->fd();
    const std::string id = port.port_id;
    if (absl::Status s = reactor_->AddReader(fd, [this, id] { OnReadable(id); }); !s.ok()) {
      failures.emplace_back(port.port_id, s);
      continue;
    }
    listeners_[id] = Listener{port, std::move(*socket)};
    counters_[id];
  }
  if (!forgotten.empty()) on_change_(forgotten);
  return failures;
}

void LldpAgent::OnReadable(const std::string& port_id) {
  auto it = listeners_.find(port_id);
  if (it == listeners_.end()) return;
  Listener& listener = it->second;
  PortLldpCounters& counters = counters_[port_id];
  absl::StatusOr<std::vector<os::ReceivedFrame>> frames = listener.socket->Read(kFramesPerBatch);
  if (!frames.ok()) {
    ++counters.socket_errors;
    return;
  }
  const os::Moment now = clock_->Read();
  bool changed = false;
  for (const os::ReceivedFrame& frame : *frames) {
    if (frame.outgoing || frame.source == listener.port.mac) continue;
    ++counters.frames_received;
    if (table_.RefreshIfIdentical(port_id, frame.bytes, now)) continue;
    absl::StatusOr<Lldpdu> lldpdu = Decode(frame.bytes);
    if (!lldpdu.ok()) {
      // Decode() only fails with a DecodeError; anything else would be a bug
      // and is counted as the most generic framing error.
      const DecodeError reason =
          DecodeErrorOf(lldpdu.status()).value_or(DecodeError::kFrameTooShort);
      ++counters.frames_discarded[static_cast<size_t>(reason)];
      continue;
    }
    counters.tlvs_discarded += lldpdu->DiscardedTlvCount();
    counters.tlvs_unrecognized += lldpdu->unrecognized_tlvs + lldpdu->unrecognized_org_tlvs;
    const ObserveResult result =
        table_.Observe(port_id, frame.source, *std::move(lldpdu), frame.bytes, now);
    changed |= result == ObserveResult::kNew || result == ObserveResult::kChanged ||
               result == ObserveResult::kRemoved;
  }
  if (changed) on_change_({port_id});
}

void LldpAgent::ExpireNeighbors() {
  // Frames that arrived while the loop was busy elsewhere still wait in the
  // sockets: read them first, so that a switch whose frames are only queued
  // is not declared gone (a loop held up for longer than the TTL would
  // otherwise age out every neighbor it had not read yet).
  std::vector<std::string> ports;
  ports.reserve(listeners_.size());
  for (const auto& [id, listener] : listeners_) ports.push_back(id);
  for (const std::string& id : ports) OnReadable(id);
  std::vector<std::string> changed = table_.Expire(clock_->Read());
  if (!changed.empty()) on_change_(changed);
}

}  // namespace rocenet::lldp
