// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_packet_socket.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace rocenet::testing {

FakePacketSocket::FakePacketSocket(FakePacketSocketFactory* factory, int ifindex,
                                   std::string ifname)
    : factory_(factory),
      ifindex_(ifindex),
      ifname_(std::move(ifname)),
      fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

FakePacketSocket::~FakePacketSocket() {
  factory_->Closed(this);
  close(fd_);
}

void FakePacketSocket::Inject(os::ReceivedFrame frame) {
  queue_.push_back(std::move(frame));
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof(one));
}

absl::StatusOr<std::vector<os::ReceivedFrame>> FakePacketSocket::Read(size_t max_frames) {
  if (!read_failure_.ok()) {
    absl::Status failure = std::move(read_failure_);
    read_failure_ = absl::OkStatus();
    return failure;
  }
  std::vector<os::ReceivedFrame> out;
  while (!queue_.empty() && out.size() < max_frames) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  if (queue_.empty()) {
    // Nothing left: no longer readable.
    uint64_t count;
    [[maybe_unused]] ssize_t n = read(fd_, &count, sizeof(count));
  }
  return out;
}

absl::Status FakePacketSocket::Send(absl::string_view frame) {
  sent_.emplace_back(frame);
  return absl::OkStatus();
}

void FakePacketSocketFactory::FailOpen(int ifindex, absl::Status status) {
  if (status.ok()) {
    open_failures_.erase(ifindex);
  } else {
    open_failures_[ifindex] = std::move(status);
  }
}

FakePacketSocket* FakePacketSocketFactory::socket(int ifindex) const {
  auto it = open_.find(ifindex);
  return it == open_.end() ? nullptr : it->second;
}

bool FakePacketSocketFactory::Inject(int ifindex, std::string bytes, const MacAddress& source,
                                     bool outgoing) {
  FakePacketSocket* target = socket(ifindex);
  if (target == nullptr) return false;
  target->Inject(os::ReceivedFrame{std::move(bytes), source, outgoing});
  return true;
}

absl::StatusOr<std::unique_ptr<os::PacketSocket>> FakePacketSocketFactory::OpenLldp(
    int ifindex, absl::string_view ifname) {
  if (auto it = open_failures_.find(ifindex); it != open_failures_.end()) return it->second;
  if (open_.contains(ifindex)) {
    // The real factory could open a second socket, but an agent never needs
    // one; a test that sees this has found a leak.
    return absl::AlreadyExistsError(absl::StrCat("fake: ifindex ", ifindex, " already open"));
  }
  auto socket = std::make_unique<FakePacketSocket>(this, ifindex, std::string(ifname));
  open_[ifindex] = socket.get();
  opened_.push_back(ifindex);
  return socket;
}

void FakePacketSocketFactory::Closed(FakePacketSocket* socket) {
  auto it = open_.find(socket->ifindex());
  if (it != open_.end() && it->second == socket) open_.erase(it);
  closed_.push_back(socket->ifindex());
}

}  // namespace rocenet::testing
