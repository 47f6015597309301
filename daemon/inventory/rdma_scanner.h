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
// Stateless over a Sysfs it does not own. Entries it cannot read are
// skipped (the GID table has empty slots that fail to read).
#pragma once

#include <map>
#include <string>

#include "daemon/inventory/port.h"
#include "daemon/os/sysfs.h"

namespace rocenet::inventory {

class RdmaScanner {
 public:
  explicit RdmaScanner(const os::Sysfs* sysfs) : sysfs_(sysfs) {}

  // By net device name; a net device without an RDMA device is absent.
  std::map<std::string, RdmaInfo> Scan() const;

 private:
  const os::Sysfs* sysfs_;
};

// "0000:0000:0000:0000:0000:ffff:0ac8:0101" -> "10.200.1.1"; "" for a GID
// that is not an IPv4-mapped address.
std::string Ipv4OfGid(const std::string& gid);

}  // namespace rocenet::inventory
