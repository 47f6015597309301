// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/node_watch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/diagd/node_ports.h"

namespace rocenet::diagd {

NodeWatch::NodeWatch(NodeWatchOptions options, NodeClient* client)
    : options_(std::move(options)),
      subscription_(
          options_,
          NodeSubscriptionCallbacks{.on_snapshot = [this](const v1::PortSnapshot& s) { Take(s); },
                                    .on_lost = nullptr},
          client) {}

absl::StatusOr<std::vector<diag::LocalPort>> NodeWatch::Ports() const {
  std::vector<diag::LocalPort> ports;
  {
    absl::MutexLock lock(&mu_);
    if (!seen_) {
      return absl::UnavailableError(absl::StrCat("no ports from rocenetd at ", options_.socket,
                                                 " yet: ", subscription_.LastError()));
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

void NodeWatch::Take(const v1::PortSnapshot& snapshot) {
  std::vector<diag::LocalPort> ports = LocalPortsOf(snapshot);
  std::set<Ipv4Address> addresses;
  for (const diag::LocalPort& port : ports) addresses.insert(port.address.address());
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    // A port that hears no switch now is still cabled to the one it heard
    // last: a leaf that went down stays named.
    for (diag::LocalPort& port : ports) {
      if (!port.leaf.empty()) {
        last_leaf_[port.name] = port.leaf;
      } else if (auto it = last_leaf_.find(port.name); it != last_leaf_.end()) {
        port.leaf = it->second;
      }
    }
    changed = !seen_ || addresses != addresses_;
    seen_ = true;
    ports_ = std::move(ports);
    addresses_ = addresses;
  }
  if (changed && options_.on_addresses) options_.on_addresses(std::move(addresses));
}

}  // namespace rocenet::diagd
