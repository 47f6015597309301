// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/listener.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"

namespace rocenet::diag {

DataListener::DataListener(uint16_t port, Handler handler)
    : port_(port), handler_(std::move(handler)) {}

DataListener::~DataListener() { Stop(); }

absl::Status DataListener::Start() {
  if (absl::Status s = wake_.Open(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("data port: ", s.message()));
  }
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void DataListener::SetAddresses(std::set<Ipv4Address> addresses) {
  {
    absl::MutexLock lock(&mu_);
    if (addresses == wanted_) return;
    wanted_ = std::move(addresses);
  }
  wake_.Signal();
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
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    listening_.clear();
    for (auto& c : connections_) {
      if (!c->done && c->fd >= 0) os::ShutdownBoth(c->fd);
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
    absl::StatusOr<os::Fd> fd = os::ListenTcp(address, port_);
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
    os::Fd fd = os::AcceptTcp(listen_fd);
    if (!fd.valid()) return;
    absl::MutexLock lock(&mu_);
    if (stopping_ || connections_.size() >= kMaxConnections) continue;  // closed here
    auto connection = std::make_unique<Connection>();
    Connection* c = connection.get();
    c->fd = fd.release();
    c->thread = std::thread([this, c] {
      handler_(os::Fd(c->fd));
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
    std::vector<int> fds = {wake_.fd()};
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      for (const auto& [address, fd] : listening_) fds.push_back(fd.get());
      retry = listening_.size() < wanted_.size();
    }
    absl::StatusOr<std::vector<bool>> readable =
        os::PollReadable(fds, retry ? absl::Seconds(1) : absl::Seconds(5));
    if (!readable.ok()) {
      SPDLOG_ERROR("data port: {}; no longer accepting", readable.status().message());
      return;
    }
    if ((*readable)[0]) wake_.Clear();
    for (size_t i = 1; i < fds.size(); ++i) {
      if ((*readable)[i]) Accept(fds[i]);
    }
    Rebind();
  }
}

}  // namespace rocenet::diag
