// SPDX-License-Identifier: Apache-2.0
// RdmaScanner: which RDMA device serves each net device, from sysfs.
//
// RoCE NICs register an RDMA (ib) device beside the net device; the
// kernel's GID table ties them together: every GID entry of
// class/infiniband/<dev>/ports/<p>/gid_attrs/ndevs/<i> names the net device
// it belongs to, gid_attrs/types/<i> says "RoCE v2" or "IB/RoCE v1", and
// gids/<i> is the GID, an IPv4 address as ::ffff:a.b.c.d. The user-space
// verbs node of a device is the class/infiniband_verbs/uverbs<N> whose ibdev
// names it (/dev/infiniband/uverbs<N>). A workload needs the uverbs node,
// /dev/infiniband/rdma_cm, and the index of the RoCE v2 GID of the port's
// IPv4 address (what NCCL/HCCL and perftest call the GID index).
//
// Each port's state and phys_state ("4: ACTIVE", "5: LinkUp") and its
// hw_counters directory (one file per counter, named by the driver) are
// read from the same port directory.
//
// Stateless over a Sysfs it does not own. Entries it cannot read are
// skipped (the GID table has empty slots that fail to read).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/inventory/port.h"
#include "daemon/os/ethtool.h"
#include "daemon/os/sysfs.h"

namespace rocenet::inventory {

class RdmaScanner {
 public:
  explicit RdmaScanner(const os::Sysfs* sysfs) : sysfs_(sysfs) {}

  // By net device name; a net device without an RDMA device is absent.
  std::map<std::string, RdmaInfo> Scan() const;

  // Re-reads the state and physical state of `info`'s device port; both
  // unknown (0, "") when the device is not in this namespace's sysfs.
  void ReadState(RdmaInfo& info) const;

  // Every counter of the port's hw_counters, by name, sorted; empty when
  // the device has none or is not here. `lifespan` (how long the kernel
  // caches the values, in ms) is not a counter and is left out.
  std::vector<os::NamedCounter> ReadCounters(const RdmaInfo& info) const;

 private:
  const os::Sysfs* sysfs_;
};

// "0000:0000:0000:0000:0000:ffff:0ac8:0101" -> "10.200.1.1"; "" for a GID
// that is not an IPv4-mapped address.
std::string Ipv4OfGid(const std::string& gid);

// "4: ACTIVE" -> {4, "ACTIVE"}; {0, ""} for text of another form.
std::pair<int, std::string> ParsePortState(const std::string& text);

}  // namespace rocenet::inventory
