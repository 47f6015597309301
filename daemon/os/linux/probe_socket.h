// SPDX-License-Identifier: Apache-2.0
// The reach probes' sockets on one scale-out port: ICMP echo (a raw socket
// bound to the port's device and address, seeing echo replies only) and ARP
// (a packet socket on the port). Non-blocking; each is used by one thread.
// Opening either needs CAP_NET_RAW.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/common/ipv4.h"
#include "daemon/os/linux/tcp_socket.h"

namespace rocenet::os {

struct EchoReply {
  Ipv4Address from;
  uint16_t id = 0;
  uint16_t sequence = 0;
};

class IcmpEchoSocket {
 public:
  // Errors read "ICMP socket: ..." or "ICMP: bind to ...: ...".
  static absl::StatusOr<IcmpEchoSocket> Open(const std::string& device, Ipv4Address source);

  int fd() const { return fd_.get(); }
  // One echo request with `payload_bytes` of counting bytes.
  absl::Status SendEcho(Ipv4Address to, uint16_t id, uint16_t sequence, int payload_bytes);
  // The next queued echo reply, if any.
  std::optional<EchoReply> Receive();

 private:
  explicit IcmpEchoSocket(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

struct ArpReply {
  Ipv4Address sender;
  std::string sender_mac;  // aa:bb:cc:dd:ee:ff
  Ipv4Address target;
};

class ArpSocket {
 public:
  // Errors read "ARP socket: ..." or "ARP: ... of <device>: ...".
  static absl::StatusOr<ArpSocket> Open(const std::string& device);

  int fd() const { return fd_.get(); }
  // A broadcast request for `target` from `sender` (this port's address).
  absl::Status Request(Ipv4Address sender, Ipv4Address target);
  // The next queued ARP reply, if any.
  std::optional<ArpReply> Receive();

 private:
  ArpSocket(Fd fd, std::string device, int ifindex, const uint8_t mac[6]);
  Fd fd_;
  std::string device_;
  int ifindex_ = 0;
  uint8_t mac_[6] = {};
};

}  // namespace rocenet::os
