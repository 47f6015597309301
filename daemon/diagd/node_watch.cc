// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/node_watch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/diagd/node_ports.h"

namespace rocenet::diagd {

NodeWatch::NodeWatch(NodeWatchOptions options, NodeClient* client)
    : options_(std::move(options)), client_(client) {}

NodeWatch::~NodeWatch() { Stop(); }

void NodeWatch::Start() { thread_ = std::thread([this] { Run(); }); }

void NodeWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (active_ != nullptr) active_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::vector<diag::LocalPort>> NodeWatch::Ports() const {
  std::vector<diag::LocalPort> ports;
  {
    absl::MutexLock lock(&mu_);
    if (!seen_) {
      return absl::UnavailableError(absl::StrCat("no ports from rocenetd at ", options_.socket,
                                                 " yet: ", last_error_));
    }
    ports = ports_;
  }
  if (options_.links) {
    absl::MutexLock lock(&links_mu_);
    absl::StatusOr<std::vector<os::LinkInfo>> links = options_.links();
    if (links.ok()) {
      RefreshFromLinks(*links, ports);
    } else {
      SPDLOG_WARN("link counters not read, the snapshot's are used: {}", links.status().message());
    }
  }
  return ports;
}

void NodeWatch::Run() {
  absl::Duration backoff = options_.initial_backoff;
  while (!stop_.HasBeenNotified()) {
    if (WatchOnce()) {
      backoff = options_.initial_backoff;
      SPDLOG_WARN("rocenetd at {}: node stream ended; reconnecting (the ports stay as last seen)",
                  options_.socket);
    }
    if (stop_.WaitForNotificationWithTimeout(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool NodeWatch::WatchOnce() {
  std::unique_ptr<NodeStream> stream = client_->Watch();
  {
    absl::MutexLock lock(&mu_);
    if (stop_.HasBeenNotified()) {
      stream->Cancel();
      return false;
    }
    active_ = stream.get();
  }
  bool got_any = false;
  v1::PortSnapshot snapshot;
  while (stream->Read(&snapshot)) {
    if (!got_any) {
      SPDLOG_INFO("rocenetd at {}: watching {} port(s)", options_.socket, snapshot.ports_size());
    }
    got_any = true;
    Take(snapshot);
  }
  const absl::Status status = stream->Finish();
  absl::MutexLock lock(&mu_);
  active_ = nullptr;
  if (!got_any) {
    if (last_error_ != status.message()) {
      SPDLOG_INFO("rocenetd at {} not reached: {}", options_.socket, status.message());
    }
    last_error_ = std::string(status.message());
  }
  return got_any;
}

void NodeWatch::Take(const v1::PortSnapshot& snapshot) {
  std::vector<diag::LocalPort> ports = LocalPortsOf(snapshot);
  std::set<Ipv4Address> addresses;
  for (const diag::LocalPort& port : ports) addresses.insert(port.address.address());
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    changed = !seen_ || addresses != addresses_;
    seen_ = true;
    ports_ = std::move(ports);
    addresses_ = addresses;
  }
  if (changed && options_.on_addresses) options_.on_addresses(std::move(addresses));
}

}  // namespace rocenet::diagd
