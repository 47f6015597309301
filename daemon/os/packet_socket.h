// SPDX-License-Identifier: Apache-2.0
// PacketSocket: raw LLDP frames on one interface.
//
// One socket per managed port, bound to that interface in the network
// namespace it was opened in (a socket stays bound to its namespace even
// after the calling thread moves on). Used from the event loop thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/mac_address.h"

namespace rocenet::os {

struct ReceivedFrame {
  std::string bytes;  // the whole Ethernet frame, without FCS
  MacAddress source;
  // Frames the interface itself sent (seen on the same socket) are marked so
  // the receiver can ignore them.
  bool outgoing = false;
};

class PacketSocket {
 public:
  virtual ~PacketSocket() = default;

  // Readable when frames are queued.
  virtual int fd() const = 0;

  // Reads at most `max_frames` queued frames without blocking. Bounding the
  // batch keeps one flooded port from starving the loop.
  virtual absl::StatusOr<std::vector<ReceivedFrame>> Read(size_t max_frames) = 0;

  // Sends one whole Ethernet frame.
  virtual absl::Status Send(absl::string_view frame) = 0;
};

class PacketSocketFactory {
 public:
  virtual ~PacketSocketFactory() = default;

  // An LLDP receive socket on `ifindex` (EtherType 0x88cc, member of the
  // nearest-bridge group 01:80:c2:00:00:0e) in the calling thread's network
  // namespace. `ifname` is for messages only.
  virtual absl::StatusOr<std::unique_ptr<PacketSocket>> OpenLldp(int ifindex,
                                                                 absl::string_view ifname) = 0;
};

}  // namespace rocenet::os
