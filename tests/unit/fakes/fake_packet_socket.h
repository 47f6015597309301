// SPDX-License-Identifier: Apache-2.0
// FakePacketSocketFactory: LLDP receive sockets for unit tests.
//
// Each socket a test opens is a queue of frames behind an eventfd: Inject()
// queues a frame and makes fd() readable, Read() takes at most the frames it
// is asked for and fd() stays readable while any are left, as a packet socket
// does. The factory keeps the open sockets by ifindex, records every open and
// close, and can refuse OpenLldp() for a chosen ifindex. Sockets tell the
// factory when they close, so the factory must outlive them. Single-threaded,
// like the real sockets.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/os/packet_socket.h"

namespace rocenet::testing {

class FakePacketSocketFactory;

class FakePacketSocket final : public os::PacketSocket {
 public:
  FakePacketSocket(FakePacketSocketFactory* factory, int ifindex, std::string ifname);
  ~FakePacketSocket() override;

  // Queues a frame as if it had arrived.
  void Inject(os::ReceivedFrame frame);
  // The next Read() fails with `status` and takes nothing off the queue.
  void FailNextRead(absl::Status status) { read_failure_ = std::move(status); }

  int ifindex() const { return ifindex_; }
  const std::string& ifname() const { return ifname_; }
  size_t queued() const { return queue_.size(); }
  const std::vector<std::string>& sent() const { return sent_; }

  int fd() const override { return fd_; }
  absl::StatusOr<std::vector<os::ReceivedFrame>> Read(size_t max_frames) override;
  absl::Status Send(absl::string_view frame) override;

 private:
  FakePacketSocketFactory* factory_;
  int ifindex_;
  std::string ifname_;
  int fd_;
  std::deque<os::ReceivedFrame> queue_;
  absl::Status read_failure_;
  std::vector<std::string> sent_;
};

class FakePacketSocketFactory final : public os::PacketSocketFactory {
 public:
  // Every OpenLldp() on `ifindex` fails with `status` until called again with
  // an OK status.
  void FailOpen(int ifindex, absl::Status status);

  // The open socket on `ifindex`, or nullptr.
  FakePacketSocket* socket(int ifindex) const;
  // Queues a frame from `source` on the open socket of `ifindex`; false when
  // there is none (the frame is lost, as on a port nobody listens to).
  bool Inject(int ifindex, std::string bytes, const MacAddress& source, bool outgoing = false);

  // Ifindexes of the sockets opened and closed so far, in order.
  const std::vector<int>& opened() const { return opened_; }
  const std::vector<int>& closed() const { return closed_; }
  size_t open_count() const { return open_.size(); }

  absl::StatusOr<std::unique_ptr<os::PacketSocket>> OpenLldp(int ifindex,
                                                             absl::string_view ifname) override;

 private:
  friend class FakePacketSocket;
  void Closed(FakePacketSocket* socket);

  std::map<int, absl::Status> open_failures_;
  std::map<int, FakePacketSocket*> open_;
  std::vector<int> opened_;
  std::vector<int> closed_;
};

}  // namespace rocenet::testing
