// SPDX-License-Identifier: Apache-2.0
// NeighborTable: the LLDP neighbors of every port, with TTL expiry.
//
// Pure state over time values the caller passes in; owned by the event loop
// thread. A neighbor is identified by its Chassis ID and Port ID (802.1AB's
// MSAP identifier). A TTL of zero removes the neighbor at once; otherwise it
// expires TTL seconds after the last frame, counted on the boot clock (the
// wall clock set forwards would age out a switch that is there, set back
// would keep one that is gone); the wall times are what users read. A port keeps at most
// `max_per_port` neighbors: a new one beyond that is ignored (802.1AB's
// tooManyNeighbors), since more than one already means something sits
// between the port and the switch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/common/mac_address.h"
#include "daemon/lldp/lldpdu.h"
#include "daemon/os/clock.h"

namespace rocenet::lldp {

struct Neighbor {
  MacAddress source;  // Ethernet source of its frames
  Lldpdu lldpdu;
  std::string frame;  // the last frame, to spot identical repeats cheaply
  // Wall times, shown: first and last frame, and when it expires.
  absl::Time first_seen;
  absl::Time last_seen;
  absl::Time expires;
  // When it expires on the boot clock: what Expire() goes by.
  os::BootTime due;
  uint64_t frames = 0;
};

// Why a port that had a neighbor has none now.
enum class NeighborLoss { kNone, kAgedOut, kShutdown };

struct PortNeighbors {
  std::vector<Neighbor> neighbors;  // in order of first appearance
  bool ever_seen = false;
  NeighborLoss loss = NeighborLoss::kNone;  // set while `neighbors` is empty
  absl::Time lost_at;                       // wall time, shown
  uint64_t ageouts = 0;
  uint64_t too_many = 0;  // frames of extra neighbors ignored
};

enum class ObserveResult {
  kNew,        // a neighbor appeared
  kChanged,    // a known neighbor sent different content
  kRefreshed,  // the same content again: only the expiry moved
  kRemoved,    // a shutdown LLDPDU (TTL 0) removed the neighbor
  kIgnored,    // the port already has the maximum number of neighbors
};

class NeighborTable {
 public:
  static constexpr size_t kDefaultMaxPerPort = 4;

  explicit NeighborTable(size_t max_per_port = kDefaultMaxPerPort) : max_per_port_(max_per_port) {}

  // If a neighbor of `port` last sent exactly `frame`, moves its expiry and
  // returns true: the caller need not decode the frame again.
  bool RefreshIfIdentical(const std::string& port, absl::string_view frame, os::Moment now);

  ObserveResult Observe(const std::string& port, const MacAddress& source, Lldpdu lldpdu,
                        absl::string_view frame, os::Moment now);

  // Removes neighbors whose TTL ran out by `now.boot`; returns the ports
  // that lost one, each once.
  std::vector<std::string> Expire(os::Moment now);

  // The earliest expiry of any neighbor, on the boot clock; nullopt when
  // there are none.
  std::optional<os::BootTime> NextExpiry() const;

  // Neighbors of `port`; nullptr if nothing was ever heard there.
  const PortNeighbors* Find(const std::string& port) const;

  // Drops everything known about `port` (it left the node).
  void ForgetPort(const std::string& port);

  const std::map<std::string, PortNeighbors>& ports() const { return ports_; }

 private:
  size_t max_per_port_;
  std::map<std::string, PortNeighbors> ports_;
};

}  // namespace rocenet::lldp
