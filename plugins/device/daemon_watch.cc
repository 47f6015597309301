// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/daemon_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "daemon/common/logging.h"
#include "plugins/device/port_map.h"

namespace rocenet::device {

DaemonWatch::DaemonWatch(DaemonWatchOptions options, NodeClient* client, DeviceState* state)
    : options_(std::move(options)), client_(client), state_(state) {}

DaemonWatch::~DaemonWatch() { Stop(); }

void DaemonWatch::Start() { thread_ = std::thread([this] { Run(); }); }

void DaemonWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (active_ != nullptr) active_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool DaemonWatch::SleepFor(absl::Duration d) { return !stop_.WaitForNotificationWithTimeout(d); }

void DaemonWatch::Run() {
  absl::Duration backoff = options_.initial_backoff;
  absl::Time lost_since = absl::Now();  // not yet reached counts as lost
  bool lost_reported = false;
  while (true) {
    if (WatchOnce()) {
      backoff = options_.initial_backoff;
      lost_since = absl::Now();
      lost_reported = false;
      SPDLOG_WARN("rocenetd at {}: node stream ended; reconnecting", options_.socket);
    }
    if (stop_.HasBeenNotified()) return;
    const absl::Time grace_end = lost_since + options_.grace;
    // The grace ends only with an attempt that failed at or after its end:
    // a daemon back just before it is never reported lost.
    if (!lost_reported && absl::Now() >= grace_end) {
      SPDLOG_ERROR("rocenetd at {} unreachable for {}: every device is Unhealthy",
                   options_.socket, absl::FormatDuration(options_.grace));
      state_->SetDaemonLost();
      lost_reported = true;
    }
    absl::Duration wait = backoff;
    if (!lost_reported) wait = std::min(wait, std::max(grace_end - absl::Now(), absl::ZeroDuration()));
    if (!SleepFor(wait)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool DaemonWatch::WatchOnce() {
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
  rocenet::v1::PortSnapshot snapshot;
  while (stream->Read(&snapshot)) {
    PortMap ports = PortsOf(snapshot);
    if (!got_any) SPDLOG_INFO("rocenetd at {}: watching {} port(s)", options_.socket, ports.size());
    got_any = true;
    state_->Update(std::move(ports));
  }
  const absl::Status status = stream->Finish();
  {
    absl::MutexLock lock(&mu_);
    active_ = nullptr;
  }
  if (!got_any) SPDLOG_DEBUG("rocenetd at {}: {}", options_.socket, status.message());
  return got_any;
}

}  // namespace rocenet::device
