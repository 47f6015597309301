// SPDX-License-Identifier: Apache-2.0
// The reach probes' sockets on one scale-out port: ICMP echo (a raw socket
// bound to the port's device and address, seeing echo replies and
// "fragmentation needed" errors only; its datagrams carry Don't Fragment and
// go out at the device's MTU whatever path MTU the kernel has learned, so a
// full-size echo tests the path) and ARP (a packet socket on the port).
// Non-blocking; each is used by one thread. Opening either needs
// CAP_NET_RAW.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/common/ipv4.h"
#include "daemon/os/linux/tcp_socket.h"

namespace rocenet::os {

// An echo reply, or a router's "fragmentation needed" about one of our
// echo requests (`from` the router, `too_big_mtu` the next hop's MTU it
// reported, 0 if it reported none).
struct EchoReply {
  Ipv4Address from;
  uint16_t id = 0;
  uint16_t sequence = 0;
  bool too_big = false;
  uint16_t too_big_mtu = 0;
};

// The MTU of the network device `device`; errors name it.
absl::StatusOr<uint32_t> DeviceMtu(const std::string& device);

class IcmpEchoSocket {
 public:
  // Errors read "ICMP socket: ..." or "ICMP: bind to ...: ...".
  static absl::StatusOr<IcmpEchoSocket> Open(const std::string& device, Ipv4Address source);

  int fd() const { return fd_.get(); }
  // One echo request with `payload_bytes` of counting bytes (an IP
  // datagram 28 bytes larger). While the socket's send buffer is full it
  // waits for room, up to 50 ms.
  absl::Status SendEcho(Ipv4Address to, uint16_t id, uint16_t sequence, int payload_bytes);
  // The next queued echo reply or "fragmentation needed", if any.
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
