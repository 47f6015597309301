// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/packet_socket_linux.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

constexpr uint16_t kLldpEtherType = 0x88cc;
constexpr uint8_t kNearestBridge[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
// LLDPDUs are at most 1500 bytes; a jumbo buffer costs nothing here.
constexpr size_t kMaxFrame = 9216;
// About a hundred full frames: LLDP sends one per port per tx interval.
constexpr int kReceiveBufferBytes = 256 * 1024;

class PacketSocketLinux final : public PacketSocket {
 public:
  PacketSocketLinux(int fd, int ifindex) : fd_(fd), ifindex_(ifindex) {}
  ~PacketSocketLinux() override {
    // Closing a packet socket waits for an RCU grace period in the kernel
    // (tens of milliseconds). Nothing needs to wait for it: close elsewhere
    // so the event loop, and a pod's CNI ADD or DEL, do not.
    std::thread([fd = fd_] { close(fd); }).detach();
  }

  int fd() const override { return fd_; }

  absl::StatusOr<std::vector<ReceivedFrame>> Read(size_t max_frames) override {
    std::vector<ReceivedFrame> frames;
    char buffer[kMaxFrame];
    while (frames.size() < max_frames) {
      sockaddr_ll from{};
      socklen_t from_len = sizeof(from);
      const ssize_t n = recvfrom(fd_, buffer, sizeof(buffer), MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return ErrnoToStatus(errno, absl::StrCat("LLDP socket on ifindex ", ifindex_, ": read"));
      }
      // MSG_TRUNC returns the real length: an oversized frame is cut, and a
      // cut frame would decode wrongly, so it is dropped.
      if (static_cast<size_t>(n) > sizeof(buffer)) continue;
      ReceivedFrame frame;
      frame.bytes.assign(buffer, static_cast<size_t>(n));
      frame.outgoing = from.sll_pkttype == PACKET_OUTGOING;
      if (from.sll_halen == MacAddress::kSize) {
        std::array<uint8_t, MacAddress::kSize> mac;
        std::memcpy(mac.data(), from.sll_addr, mac.size());
        frame.source = MacAddress(mac);
      }
      frames.push_back(std::move(frame));
    }
    return frames;
  }

  absl::Status Send(absl::string_view frame) override {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(kLldpEtherType);
    to.sll_ifindex = ifindex_;
    to.sll_halen = 6;
    std::memcpy(to.sll_addr, kNearestBridge, 6);
    if (sendto(fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) <
        0) {
      return ErrnoToStatus(errno, absl::StrCat("LLDP socket on ifindex ", ifindex_, ": send"));
    }
    return absl::OkStatus();
  }

 private:
  const int fd_;
  const int ifindex_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PacketSocket>> PacketSocketFactoryLinux::OpenLldp(
    int ifindex, absl::string_view ifname) {
  const std::string what = absl::StrCat("LLDP socket on ", ifname);
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoToStatus(errno, what);
  auto fail = [&](absl::string_view step) {
    const int saved = errno;
    close(fd);
    return ErrnoToStatus(saved, absl::StrCat(what, ": ", step));
  };

  // ldh [12]; jeq #0x88cc, pass, drop; pass: ret #-1; drop: ret #0
  sock_filter code[] = {
      {BPF_LD | BPF_H | BPF_ABS, 0, 0, 12},
      {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, kLldpEtherType},
      {BPF_RET | BPF_K, 0, 0, 0xffffffff},
      {BPF_RET | BPF_K, 0, 0, 0},
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(code) / sizeof(code[0])), code};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) < 0) {
    return fail("attach BPF filter");
  }
  const int buffer = kReceiveBufferBytes;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer)) < 0) {
    return fail("set receive buffer");
  }
  // Our own transmissions would otherwise come back on this socket.
  const int ignore = 1;
  setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &ignore, sizeof(ignore));

  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(kLldpEtherType);
  addr.sll_ifindex = ifindex;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) return fail("bind");

  packet_mreq membership{};
  membership.mr_ifindex = ifindex;
  membership.mr_type = PACKET_MR_MULTICAST;
  membership.mr_alen = 6;
  std::memcpy(membership.mr_address, kNearestBridge, 6);
  if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &membership, sizeof(membership)) < 0) {
    return fail("join 01:80:c2:00:00:0e");
  }
  return std::unique_ptr<PacketSocket>(new PacketSocketLinux(fd, ifindex));
}

}  // namespace rocenet::os
