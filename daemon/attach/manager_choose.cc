// SPDX-License-Identifier: Apache-2.0
// AttachManager, choosing: which port an Attach takes (by id, by PCI
// function, the pod's reserved ones, or any free one where the network
// allows it), and why it takes none.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/attach/manager.h"
#include "daemon/attach/reservations.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {
namespace {

// The refusal of a pod that reaches the plugin with neither a device id nor
// a reservation, under a network that does not allow any free port. Under
// Kubernetes that is a pod on the network whose containers asked for no
// port: taking one would take it behind kubelet's back, which then gives it
// to the next pod that asks. The message shows in the pod's
// FailedCreatePodSandBox event, so it names the fix. It starts with the
// configuration key, as the plugin's messages about a key do.
absl::Status NoPortAskedFor(const PodIdentity& pod) {
  const std::string who =
      pod.name.empty() ? std::string("the container")
                       : absl::StrCat("pod ", pod.ns, "/", pod.name,
                                      pod.uid.empty() ? "" : absl::StrCat(" (uid ", pod.uid, ")"));
  return absl::InvalidArgumentError(absl::StrCat(
      "deviceID: none given and no port reserved for ", who,
      ": ask for the port in the pod, with a limit of rocenet.io/scale-out-port (the "
      "resource the NetworkAttachmentDefinition's k8s.v1.cni.cncf.io/resourceName names) or a "
      "ResourceClaim of DeviceClass scale-out-port.rocenet.io; nothing was taken. Only a network "
      "for a runtime without kubelet may set \"anyFreePort\": true"));
}

}  // namespace

absl::StatusOr<const PortCandidate*> AttachManager::Choose(
    const AttachRequest& request, const std::vector<PortCandidate>& ports) const {
  // Why `port` cannot be attached now, naming it; OK when it can.
  auto usable = [&](const PortCandidate& port) -> absl::Status {
    const std::string name = absl::StrCat("port ", port.port_id, " (", port.host_ifname, ")");
    if (const AttachmentRecord* holder = journal_->FindByPort(port.port_id); holder != nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, " is attached to pod ",
          holder->pod.name.empty() ? std::string("(unnamed)")
                                   : absl::StrCat(holder->pod.ns, "/", holder->pod.name),
          " (container ", holder->container_id, ", ", holder->ifname, ")"));
    }
    RETURN_IF_ERROR(CheckReservedFor(request, port));
    if (!port.present) {
      return absl::FailedPreconditionError(absl::StrCat(name, " is not in the host namespace"));
    }
    if (request.l3 && port.plan_refused) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, " has no address: its switch's Port Description is refused (", port.plan_reason,
          ": ", port.plan_message, "); fix the switch port, see rocectl addressing"));
    }
    if (request.l3 &&
        (!port.provisioned || !port.applied.has_value() || !port.applied->local.has_value())) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, " has no address from LLDP yet; see rocectl addressing"));
    }
    return absl::OkStatus();
  };
  if (request.device_id.empty() && reservations_ != nullptr && !request.pod.uid.empty()) {
    // Multus cannot pass on the DRA device, only the pod: the pod gets what
    // was reserved for it, in the order the scheduler allocated it, whatever
    // its health, which the scheduler already weighed. A reserved port that
    // cannot be attached is an error, not a reason to take another: the
    // pod's claim names that port.
    const std::vector<const Reservation*> mine = reservations_->ForPod(request.pod.uid);
    const std::string pod =
        absl::StrCat("pod ", request.pod.ns, "/", request.pod.name, " (uid ", request.pod.uid, ")");
    std::vector<std::string> held;
    for (const Reservation* reservation : mine) {
      for (const std::string& port_id : reservation->port_ids) {
        if (const AttachmentRecord* holder = journal_->FindByPort(port_id); holder != nullptr) {
          held.push_back(absl::StrCat(port_id, " (", holder->host_ifname, ")"));
          continue;
        }
        const auto it = std::find_if(ports.begin(), ports.end(), [&](const PortCandidate& port) {
          return port.port_id == port_id;
        });
        const std::string context =
            absl::StrCat("the port ", HolderName(*reservation), " reserved for ", pod);
        if (it == ports.end()) {
          return absl::FailedPreconditionError(
              absl::StrCat(context, ": port ", port_id, " is not a port of this node any more"));
        }
        RETURN_IF_ERROR(WithContext(usable(*it), context));
        return &*it;
      }
    }
    if (!mine.empty()) {
      std::vector<std::string> owners;
      for (const Reservation* reservation : mine) owners.push_back(HolderName(*reservation));
      return absl::ResourceExhaustedError(absl::StrCat(
          "no free port reserved for ", pod, ": every port ", absl::StrJoin(owners, " and "),
          " reserved for it is attached (", absl::StrJoin(held, ", "), ")"));
    }
  }
  if (!request.device_id.empty()) {
    // Asked for by id (the device plugin's allocation): the pod gets that
    // port whatever its health, which kubelet already weighed.
    for (const PortCandidate& port : ports) {
      if (port.port_id == request.device_id) {
        RETURN_IF_ERROR(usable(port));
        return &port;
      }
    }
    // A PCI address names a function, which may have several ports: the
    // first free one of them.
    std::vector<std::string> refusals;
    for (const PortCandidate& port : ports) {
      if (port.pci_address.empty() || port.pci_address != request.device_id) continue;
      absl::Status status = usable(port);
      if (status.ok()) return &port;
      refusals.emplace_back(status.message());
    }
    if (!refusals.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no free port on PCI function ", request.device_id, ": ", absl::StrJoin(refusals, "; ")));
    }
    return absl::NotFoundError(
        absl::StrCat("device id \"", request.device_id, "\" is not a port of this node"));
  }
  if (!request.any_free_port) return NoPortAskedFor(request.pod);
  // Any free port: only a healthy one, so a pod never starts on a port that
  // is down or cut off from its switch.
  std::vector<std::string> refusals;
  for (const PortCandidate& port : ports) {
    absl::Status status = usable(port);
    if (status.ok() && !port.healthy) {
      status = absl::FailedPreconditionError(absl::StrCat(
          "port ", port.port_id, " (", port.host_ifname, ") is not healthy (",
          port.conditions.empty() ? std::string("see rocectl health") : port.conditions, ")"));
    }
    if (status.ok()) return &port;
    refusals.emplace_back(status.message());
  }
  if (refusals.empty()) return absl::ResourceExhaustedError("no free port: the node has no ports");
  return absl::ResourceExhaustedError(
      absl::StrCat("no free port: ", absl::StrJoin(refusals, "; ")));
}

absl::Status AttachManager::CheckReservedFor(const AttachRequest& request,
                                             const PortCandidate& port) const {
  if (reservations_ == nullptr) return absl::OkStatus();
  const Reservation* reservation = reservations_->FindByPort(port.port_id);
  if (reservation == nullptr) return absl::OkStatus();
  const std::vector<std::string>& pods = reservation->pod_uids;
  if (!request.pod.uid.empty() &&
      std::find(pods.begin(), pods.end(), request.pod.uid) != pods.end()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "port ", port.port_id, " (", port.host_ifname, ") is reserved by ", HolderName(*reservation),
      ", not for ",
      request.pod.uid.empty() ? std::string("a pod whose uid was not given")
                              : absl::StrCat("pod ", request.pod.ns, "/", request.pod.name,
                                             " (uid ", request.pod.uid, ")")));
}

}  // namespace rocenet::attach
