// SPDX-License-Identifier: Apache-2.0
// Test support for daemon/api: a NodeStateSource that answers from a fixed
// snapshot, and hand-built snapshots of a small node.
//
// FakeNodeState may be called from gRPC's threads; the snapshots are set
// before serving starts and only read afterwards.
#pragma once

#include <atomic>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "daemon/node/snapshot.h"

namespace rocenet::api::testing {

// The time every sample snapshot is taken at.
inline const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Three ports:
//  so0 (0000:19:00.0-p8): hears leaf1 (every TLV kind filled in), plan Ready
//      10.200.1.1/30 via 10.200.1.2, provisioned; LLDP counters with two
//      discarded frames (missing_ttl) and one bad_ttl_length.
//  so1 (0000:19:00.0-p22): neighbor aged out 30s ago, plan Refused
//      PeerIsNetworkAddress, not provisioned.
//  so2 (0000:19:00.0-p23): never heard anything, plan Pending NoLldpNeighbor.
node::NodeSnapshot SampleSnapshot();

// A neighbor whose strings hold bytes that are not UTF-8, as a hostile or
// broken switch may send: system name "sw\xff\xfe1", Port Description
// "no-alert \xc3(10.200.1.2/30", a Local Chassis ID of two non-ASCII bytes.
lldp::Neighbor HostileNeighbor();

class FakeNodeState final : public node::NodeStateSource {
 public:
  explicit FakeNodeState(node::NodeSnapshot snapshot)
      : snapshot_(std::make_shared<const node::NodeSnapshot>(std::move(snapshot))) {}

  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> Current() override {
    if (!status_.ok()) return status_;
    return snapshot_;
  }
  const Broadcast<node::NodeSnapshot>& changes() const override { return changes_; }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> Reconcile() override {
    ++reconciles_;
    if (!status_.ok()) return status_;
    return reconciled_ != nullptr ? reconciled_ : snapshot_;
  }

  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> ReadCounters() override {
    ++counter_reads_;
    if (!status_.ok()) return status_;
    return read_ != nullptr ? read_ : snapshot_;
  }

  // Every call fails with `status` from now on.
  void set_status(absl::Status status) { status_ = std::move(status); }
  // What Reconcile() returns instead of the sampled snapshot.
  void set_reconciled(node::NodeSnapshot snapshot) {
    reconciled_ = std::make_shared<const node::NodeSnapshot>(std::move(snapshot));
  }
  int reconciles() const { return reconciles_; }
  // What ReadCounters() returns instead of the sampled snapshot.
  void set_read(node::NodeSnapshot snapshot) {
    read_ = std::make_shared<const node::NodeSnapshot>(std::move(snapshot));
  }
  int counter_reads() const { return counter_reads_; }

 private:
  std::shared_ptr<const node::NodeSnapshot> snapshot_;
  std::shared_ptr<const node::NodeSnapshot> reconciled_;
  std::shared_ptr<const node::NodeSnapshot> read_;
  absl::Status status_;
  std::atomic<int> reconciles_{0};
  std::atomic<int> counter_reads_{0};
  Broadcast<node::NodeSnapshot> changes_;
};

}  // namespace rocenet::api::testing
