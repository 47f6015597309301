// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "daemon/common/errno_status.h"
#include "daemon/common/logging.h"

namespace rocenet::diag {

DataListener::DataListener(uint16_t port, Handler handler)
    : port_(port), handler_(std::move(handler)) {}

DataListener::~DataListener() { Stop(); }

absl::Status DataListener::Start() {
  wake_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_.valid()) return ErrnoToStatus(errno, "eventfd for the data port");
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void DataListener::SetAddresses(std::set<Ipv4Address> addresses) {
  {
    absl::MutexLock lock(&mu_);
    if (addresses == wanted_) return;
    wanted_ = std::move(addresses);
  }
  const uint64_t one = 1;
  if (wake_.valid()) (void)!write(wake_.get(), &one, sizeof(one));
}

std::set<Ipv4Address> DataListener::Bound() const {
  absl::MutexLock lock(&mu_);
  std::set<Ipv4Address> out;
  for (const auto& [address, fd] : listening_) out.insert(address);
  return out;
}

void DataListener::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  const uint64_t one = 1;
  if (wake_.valid()) (void)!write(wake_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    listening_.clear();
    for (auto& c : connections_) {
      if (!c->done && c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
    }
    connections.swap(connections_);
  }
  for (auto& c : connections) {
    if (c->thread.joinable()) c->thread.join();
  }
}

void DataListener::Rebind() {
  absl::MutexLock lock(&mu_);
  for (auto it = listening_.begin(); it != listening_.end();) {
    if (wanted_.contains(it->first)) {
      ++it;
    } else {
      SPDLOG_INFO("data port: no longer listening on {}:{}", it->first.ToString(), port_);
      it = listening_.erase(it);
    }
  }
  for (Ipv4Address address : wanted_) {
    if (listening_.contains(address)) continue;
    absl::StatusOr<Fd> fd = ListenTcp(address, port_);
    if (!fd.ok()) {
      SPDLOG_DEBUG("data port: {}; retrying", fd.status().message());
      continue;
    }
    SPDLOG_INFO("data port: listening on {}:{}", address.ToString(), port_);
    listening_.emplace(address, std::move(*fd));
  }
}

void DataListener::ReapDone() {
  std::list<std::unique_ptr<Connection>> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->done) {
        done.push_back(std::move(*it));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : done) c->thread.join();
}

void DataListener::Accept(int listen_fd) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    absl::MutexLock lock(&mu_);
    if (stopping_ || connections_.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>();
    Connection* c = connection.get();
    c->fd = fd;
    c->thread = std::thread([this, c] {
      handler_(Fd(c->fd));
      absl::MutexLock lock(&mu_);
      c->done = true;
      c->fd = -1;
    });
    connections_.push_back(std::move(connection));
  }
}

void DataListener::Run() {
  bool retry = false;
  for (;;) {
    ReapDone();
    std::vector<pollfd> fds = {{wake_.get(), POLLIN, 0}};
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      for (const auto& [address, fd] : listening_) fds.push_back({fd.get(), POLLIN, 0});
      retry = listening_.size() < wanted_.size();
    }
    const int n = poll(fds.data(), fds.size(), retry ? 1000 : 5000);
    if (n < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) {
      uint64_t value = 0;
      (void)!read(wake_.get(), &value, sizeof(value));
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) Accept(fds[i].fd);
    }
    Rebind();
  }
}

}  // namespace rocenet::diag
