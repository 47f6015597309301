// SPDX-License-Identifier: Apache-2.0
// AttachmentRecord: one port handed to one pod, as the journal keeps it.
//
// Value type, thread-compatible. Holds everything needed to undo the
// attachment after a crash: where the port came from (host name, MAC, PCI
// address) and where it went (netns path, name in the pod).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/addressing/plan.h"
#include "daemon/common/ipv4.h"

namespace rocenet::attach {

enum class AttachState {
  kAttaching,  // intent recorded; the port may be in the host or the pod
  kAttached,   // the port is in the pod, configured
  kDetaching,  // on its way back
};

struct PodIdentity {
  std::string ns;
  std::string name;
  std::string uid;

  friend bool operator==(const PodIdentity&, const PodIdentity&) = default;
};

struct AttachmentRecord {
  std::string container_id;
  std::string ifname;  // in the pod
  std::string netns;   // the pod's netns path
  std::string port_id;
  std::string host_ifname;
  std::string mac;  // to find the device again wherever it went
  std::string pci_address;
  // A virtual device (veth) dies with the pod's namespace; a physical one
  // comes back to the host on its own, and may take a moment to.
  bool virtual_device = false;
  // The RDMA device moved into the pod with the port (the RDMA subsystem in
  // exclusive namespace mode); it goes home before the port does. Empty:
  // none moved.
  std::string rdma_device;
  AttachState state = AttachState::kAttaching;
  PodIdentity pod;
  std::string cni_version;
  // The CNI network (configuration `name`) it was attached for; empty in
  // records written before rocenet kept it.
  std::string network;
  int64_t created_unix = 0;
  uint32_t mtu = 0;
  // The MTU the port had in the host, put back when it comes home; a pod's
  // `mtu` must not outlive the pod. 0: unknown, left as it is.
  uint32_t host_mtu = 0;
  // The addressing inside the pod (L3 only).
  std::optional<Ipv4Prefix> local;
  std::optional<Ipv4Address> peer;
  std::vector<addressing::Route> routes;
  uint32_t table = 0;  // policy-routing table of the port in the pod

  friend bool operator==(const AttachmentRecord&, const AttachmentRecord&) = default;
};

absl::string_view StateName(AttachState state);

}  // namespace rocenet::attach
