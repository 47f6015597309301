// SPDX-License-Identifier: Apache-2.0
// NodeWatch: keeps rocenet-diagd's view of the node's ports in step with
// rocenetd.
//
// One thread holds rocenetd's node stream open (NodeSubscription) and turns each
// snapshot into the diagnostics' ports (node_ports.h); when the set of the
// ports' addresses changes, `on_addresses` is called with it (the data port
// follows it). When the stream breaks the thread reconnects with exponential
// backoff, and the ports stay as last seen: rocenetd leaves every port as it
// is when it stops, so a test can run through its restart.
//
// Ports() is the diagnostics' PortsSource: the last snapshot's ports with
// their link state and drop counters read from the kernel at the call
// (`links`, read-only), since a snapshot's counters are as old as its last
// change. Before the first snapshot it is Unavailable, naming rocenetd's
// socket and why it was not reached.
//
// Start() and Stop() from one thread; Ports() from any.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/local_port.h"
#include "daemon/node_client/node_client.h"
#include "daemon/node_client/node_subscription.h"
#include "daemon/os/link.h"

namespace rocenet::diagd {

// The subscription's socket and backoff (no grace: the ports stay as last
// seen however long rocenetd is away), and what the watch does with them.
struct NodeWatchOptions : NodeSubscriptionOptions {
  NodeWatchOptions() { while_away = " (the ports stay as last seen)"; }
  // The kernel's links now; null: the snapshot's state and counters are used.
  std::function<absl::StatusOr<std::vector<os::LinkInfo>>()> links;
  // Called on the watch's thread with the addresses of the ports, each time
  // they change (the first snapshot included).
  std::function<void(std::set<Ipv4Address>)> on_addresses;
};

class NodeWatch {
 public:
  // `client` is not owned and must outlive the watch.
  NodeWatch(NodeWatchOptions options, NodeClient* client);
  NodeWatch(const NodeWatch&) = delete;
  NodeWatch& operator=(const NodeWatch&) = delete;

  void Start() { subscription_.Start(); }
  void Stop() { subscription_.Stop(); }

  absl::StatusOr<std::vector<diag::LocalPort>> Ports() const;

 private:
  void Take(const v1::PortSnapshot& snapshot);

  const NodeWatchOptions options_;
  mutable absl::Mutex mu_;
  bool seen_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<diag::LocalPort> ports_ ABSL_GUARDED_BY(mu_);
  std::set<Ipv4Address> addresses_ ABSL_GUARDED_BY(mu_);
  // Port name -> the switch it last heard (LocalPort::leaf).
  std::map<std::string, std::string> last_leaf_ ABSL_GUARDED_BY(mu_);
  // One link dump at a time.
  mutable absl::Mutex links_mu_;
  // Last: stopped (its thread joined) before the members above go.
  NodeSubscription subscription_;
};

}  // namespace rocenet::diagd
