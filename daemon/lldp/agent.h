// SPDX-License-Identifier: Apache-2.0
// LldpAgent: receives LLDP on every managed port and keeps the neighbor table.
//
// Owned by the event loop thread; every method runs there. For each port it
// holds one PacketSocket registered with the Reactor. Frames from the port's
// own MAC and outgoing copies are ignored; a frame identical to the last one
// of a known neighbor only moves its expiry (no decode); malformed frames are
// counted by reason and dropped. After each batch the agent reports the ports
// whose neighbors changed through the callback given at construction.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/common/mac_address.h"
#include "daemon/lldp/decode_error.h"
#include "daemon/lldp/neighbor_table.h"
#include "daemon/os/clock.h"
#include "daemon/os/packet_socket.h"
#include "daemon/os/reactor.h"

namespace rocenet::lldp {

// What the agent needs to know of a port.
struct AgentPort {
  std::string port_id;
  std::string ifname;
  int ifindex = 0;
  MacAddress mac;
  // Where the port is: empty for the agent's own namespace, else a pod's
  // netns path, with the factory that opens sockets there. A port that moves
  // keeps its neighbors: the switch at the other end of the cable is the same.
  std::string netns;
  os::PacketSocketFactory* factory = nullptr;
};

struct PortLldpCounters {
  uint64_t frames_received = 0;
  std::array<uint64_t, kNumDecodeErrors> frames_discarded{};  // by DecodeError
  uint64_t tlvs_discarded = 0;
  uint64_t tlvs_unrecognized = 0;
  uint64_t socket_errors = 0;
};

class LldpAgent {
 public:
  using ChangeCallback = std::function<void(const std::vector<std::string>& port_ids)>;

  // None of the pointers is owned; all must outlive the agent.
  LldpAgent(os::PacketSocketFactory* sockets, os::Reactor* reactor, const os::Clock* clock,
            ChangeCallback on_change);
  ~LldpAgent();

  // Opens sockets for ports that are new or moved to another ifindex and
  // closes those of ports that left; forgets the neighbors of ports that left.
  // Returns the ports whose socket could not be opened, with the reason.
  std::vector<std::pair<std::string, absl::Status>> SyncPorts(const std::vector<AgentPort>& ports);

  // Removes neighbors whose TTL ran out; reports changes like frames do.
  void ExpireNeighbors();

  const NeighborTable& table() const { return table_; }
  const std::map<std::string, PortLldpCounters>& counters() const { return counters_; }

 private:
  struct Listener {
    AgentPort port;
    std::unique_ptr<os::PacketSocket> socket;
  };
  void OnReadable(const std::string& port_id);

  os::PacketSocketFactory* sockets_;
  os::Reactor* reactor_;
  const os::Clock* clock_;
  ChangeCallback on_change_;
  NeighborTable table_;
  std::map<std::string, Listener> listeners_;  // by port id
  std::map<std::string, PortLldpCounters> counters_;
};

}  // namespace rocenet::lldp
