// SPDX-License-Identifier: Apache-2.0
// PacketSocketLinux: the PacketSocket seam over AF_PACKET.
//
// The socket starts with protocol 0 (receives nothing), gets a classic BPF
// filter that passes only EtherType 0x88cc, and only then binds to the
// interface, so no other traffic is ever queued on it. Its receive buffer is
// small and fixed: a flood fills it and the kernel drops the excess instead of
// the daemon growing.
#pragma once

#include "daemon/os/packet_socket.h"

namespace rocenet::os {

class PacketSocketFactoryLinux final : public PacketSocketFactory {
 public:
  absl::StatusOr<std::unique_ptr<PacketSocket>> OpenLldp(int ifindex,
                                                         absl::string_view ifname) override;
};

}  // namespace rocenet::os
