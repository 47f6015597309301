// SPDX-License-Identifier: Apache-2.0
// DeviceState: the device list the plugin reports, shared between the
// daemon watch (the only writer) and the ListAndWatch streams (readers).
//
// Every change bumps a generation; readers wait for a generation newer than
// the one they sent. Thread-safe. ToListAndWatch() is pure.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "k8s/deviceplugin/v1beta1/api.pb.h"
#include "plugins/device/port_info.h"

namespace rocenet::device {

inline constexpr char kHealthy[] = "Healthy";
inline constexpr char kUnhealthy[] = "Unhealthy";

struct DeviceSnapshot {
  uint64_t generation = 0;
  PortMap ports;
  // The daemon has been unreachable for longer than the grace period: no
  // port can be trusted, whatever it last reported.
  bool daemon_lost = false;
  bool shut_down = false;
  // Rises with every Resend(): the list is to be sent again as it is.
  uint64_t resends = 0;
};

class DeviceState {
 public:
  // A fresh view from the daemon; clears daemon_lost. A device once
  // allocated that the view lacks stays listed, not present: kubelet must
  // not see a device a container holds vanish. A port the view gives no MAC
  // (moving between namespaces) keeps the one it had.
  void Update(PortMap ports);
  // Devices handed to a container (Allocate).
  void NoteAllocated(const std::vector<std::string>& ids);
  void SetDaemonLost();
  // Has every ListAndWatch stream send the list again, unchanged: kubelet
  // marks a resource's devices unhealthy when any plugin of the resource
  // deregisters (a rolling update's old pod leaving), and only a new
  // message from the plugin that stays makes them healthy again.
  void Resend();
  // Wakes every waiter for good; streams end.
  void Shutdown();

  DeviceSnapshot Get() const;
  // The state once its generation is above `after`, or after `timeout`,
  // whichever is first.
  DeviceSnapshot WaitNewer(uint64_t after, absl::Duration timeout) const;

 private:
  DeviceSnapshot CopyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  DeviceSnapshot state_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> allocated_ ABSL_GUARDED_BY(mu_);
};

// The full device list kubelet gets: every port, sorted by id, Healthy only
// when the daemon says so, the port is present and the daemon is not lost;
// with the port's NUMA node when known.
v1beta1::ListAndWatchResponse ToListAndWatch(const DeviceSnapshot& snapshot);

}  // namespace rocenet::device
