// SPDX-License-Identifier: Apache-2.0
// NodeSubscription: rocenetd's node stream held open on a thread of its own,
// the one reconnect loop of every program beside rocenetd (the device
// plugin, rocenet-diagd).
//
// Each snapshot goes to `on_snapshot` on that thread. When the stream ends
// the thread opens a new one, backing off exponentially from
// `initial_backoff` to `max_backoff` and starting over after a stream that
// delivered. With a `grace`, `on_lost` is called once rocenetd has been
// unreachable that long (never reached counts from Start()), and again
// only after a stream delivered in between; the grace ends only with an
// attempt that failed at or after its end, so a rocenetd back just before
// it is never reported lost.
//
// Start() and Stop() from one thread; Stop() cancels the open stream and
// joins. LastError() from any thread.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "daemon/node_client/node_client.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet {

struct NodeSubscriptionOptions {
  // rocenetd's socket, for messages.
  std::string socket = "/run/rocenet/rocenetd.sock";
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  // Zero: rocenetd is never reported lost.
  absl::Duration grace = absl::ZeroDuration();
  // Said after "node stream ended; reconnecting" (what the program keeps
  // meanwhile).
  std::string while_away;
  std::function<absl::Time()> now = absl::Now;
};

struct NodeSubscriptionCallbacks {
  // Every snapshot, in order; required.
  std::function<void(const v1::PortSnapshot&)> on_snapshot;
  // rocenetd unreachable for the grace; optional.
  std::function<void()> on_lost;
};

class NodeSubscription {
 public:
  // `client` is not owned and must outlive the subscription.
  NodeSubscription(NodeSubscriptionOptions options, NodeSubscriptionCallbacks callbacks,
                   NodeClient* client);
  ~NodeSubscription();
  NodeSubscription(const NodeSubscription&) = delete;
  NodeSubscription& operator=(const NodeSubscription&) = delete;

  void Start();
  void Stop();

  // Why the last attempt delivered nothing ("not connected yet" before
  // the first).
  std::string LastError() const;

 private:
  void Run();
  // Streams until the stream ends; true when at least one snapshot came.
  bool WatchOnce();

  const NodeSubscriptionOptions options_;
  const NodeSubscriptionCallbacks callbacks_;
  NodeClient* const client_;
  std::thread thread_;
  absl::Notification stop_;
  mutable absl::Mutex mu_;
  NodeStream* active_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::string last_error_ ABSL_GUARDED_BY(mu_) = "not connected yet";
};

}  // namespace rocenet
