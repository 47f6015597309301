// SPDX-License-Identifier: Apache-2.0
#include "daemon/node_client/node_subscription.h"

#include <algorithm>
#include <utility>

#include "daemon/common/logging.h"

namespace rocenet {

NodeSubscription::NodeSubscription(NodeSubscriptionOptions options,
                                   NodeSubscriptionCallbacks callbacks, NodeClient* client)
    : options_(std::move(options)), callbacks_(std::move(callbacks)), client_(client) {}

NodeSubscription::~NodeSubscription() { Stop(); }

void NodeSubscription::Start() {
  thread_ = std::thread([this] { Run(); });
}

void NodeSubscription::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (active_ != nullptr) active_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

std::string NodeSubscription::LastError() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

void NodeSubscription::Run() {
  absl::Duration backoff = options_.initial_backoff;
  absl::Time lost_since = options_.now();  // not yet reached counts as lost
  bool lost_reported = false;
  const bool watch_grace = options_.grace > absl::ZeroDuration() && callbacks_.on_lost;
  while (true) {
    if (WatchOnce()) {
      backoff = options_.initial_backoff;
      lost_since = options_.now();
      lost_reported = false;
      SPDLOG_WARN("rocenetd at {}: node stream ended; reconnecting{}", options_.socket,
                  options_.while_away);
    }
    if (stop_.HasBeenNotified()) return;
    absl::Duration wait = backoff;
    if (watch_grace && !lost_reported) {
      const absl::Time grace_end = lost_since + options_.grace;
      if (options_.now() >= grace_end) {
        SPDLOG_ERROR("rocenetd at {} unreachable for {}", options_.socket,
                     absl::FormatDuration(options_.grace));
        callbacks_.on_lost();
        lost_reported = true;
      } else {
        wait = std::min(wait, std::max(grace_end - options_.now(), absl::ZeroDuration()));
      }
    }
    if (stop_.WaitForNotificationWithTimeout(wait)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool NodeSubscription::WatchOnce() {
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
    callbacks_.on_snapshot(snapshot);
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

}  // namespace rocenet
