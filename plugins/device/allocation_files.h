// SPDX-License-Identifier: Apache-2.0
// AllocationFiles: the host files of the allocations the plugin handed out
// (Multus device-info files, each allocation's HCL directory), kept current
// while the allocation lives and removed when it ends.
//
// An allocation ends when kubelet gives one of its ports to another
// container (a newer Write) and when kubelet no longer assigns its ports to
// any container (Retain, from the PodResources API). Not when the plugin
// stops: a running container has its HCL directory bind-mounted, and a
// directory removed and made again at the same path is not the one it
// sees; the files stay for whoever serves the resource next. Not on the
// pod's CNI DEL either: a container restarted in the same pod is given the
// same mounts again, from kubelet's record of the allocation, without a new
// Allocate. For the same reason a plugin that starts takes over the files
// of every allocation kubelet still assigns, writing them again in place
// (a container restarted later needs its HCL directory), and removes files
// in its directories that no live allocation owns (left by a plugin that
// stopped while their pods went).
//
// Thread-safe: Allocate (gRPC threads) writes, the refresher thread
// refreshes and retains; one mutex orders them, so a sweep never sees an
// allocation's files before it is tracked. File errors in Refresh and
// Retain are logged, not returned: they are tried again on the next pass.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "plugins/device/allocate.h"
#include "plugins/device/port_info.h"

namespace rocenet::device {

class AllocationFiles {
 public:
  explicit AllocationFiles(AllocateOptions options) : options_(std::move(options)) {}

  // Writes every file of `allocation` and tracks it. An older allocation
  // sharing a port with it has ended: its files go. Internal naming the
  // file when one cannot be written (what was written stays, tracked).
  absl::Status Write(const ContainerAllocation& allocation, absl::Time now);

  // Rewrites the HCL files whose content `ports` changes (an address that
  // moved, a port that lost or got one); the number of files rewritten or
  // removed.
  int Refresh(const PortMap& ports);

  // `assigned`: the device ids of each container kubelet assigns them to
  // now. Ends the allocations that kubelet has not assigned for `grace`
  // (since they were allocated or last seen assigned: the grace covers the
  // moment between Allocate and kubelet recording it, and a kubelet that
  // restarted and answers before it has its pods back), writes again the
  // files of those that are assigned but not tracked (a plugin restarted),
  // when `ports` knows their ports, and removes files in the plugin's
  // directories that belong to neither. The number ended.
  int Retain(const std::vector<std::vector<std::string>>& assigned, const PortMap& ports,
             absl::Time now, absl::Duration grace);

  // The tracked allocations' port ids (sorted within each), for tests.
  std::vector<std::vector<std::string>> Allocations() const;

 private:
  struct Entry {
    std::vector<std::string> ids;
    std::vector<std::string> devinfo_paths;
    std::string hcl_dir;
    std::map<std::string, std::string> hcl_files;  // path -> content written
    // When it was allocated, or last seen assigned by kubelet.
    absl::Time since;
  };
  static void Remove(const Entry& entry);
  void TrackLocked(const ContainerAllocation& allocation, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveOrphansLocked(const std::set<std::string>& keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AllocateOptions options_;
  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::device
