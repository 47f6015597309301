// SPDX-License-Identifier: Apache-2.0
// The rocenet CNI plugin as a function: environment, stdin and stdout in,
// exit code out. main() is one call to Run(); tests call Dispatch() with
// their own streams and daemon, so every verb runs without a process.
//
// Each invocation parses and validates (netconf.h), makes at most one call
// to rocenetd (attachments_client.h) and prints one JSON document:
//
//   ADD      Attach -> the CNI result (result.h)
//   DEL      Detach -> nothing
//   CHECK    Check, then compare with prevResult -> nothing
//   GC       Gc(the containers of cni.dev/valid-attachments) -> nothing
//   STATUS   List, to see that rocenetd answers -> nothing
//   VERSION  no daemon call -> {"cniVersion", "supportedVersions"}
//
// Failures print the CNI error object (errors.h) and return 1.
//
// DEL is idempotent. It succeeds when rocenetd has no such attachment, and,
// as the spec asks of DEL without CNI_NETNS ("clean up as many resources as
// possible and return a successful response"), when CNI_NETNS is empty and
// rocenetd cannot be reached: the pod's namespace is gone, the kernel has
// returned the port to the host, and rocenetd restores it when it is back.
// With the namespace still there the port is inside the pod and only
// rocenetd can bring it back, so DEL fails with 11 and the runtime retries
// (kubelet retries StopPodSandbox) instead of forgetting a port that would
// then be handed out again while still inside this pod.
//
// stderr gets one line when DEL succeeds without reaching the daemon, and
// a short description when CNI_COMMAND is not set (someone ran the binary by
// hand); nothing else. No threads, no global state.
#pragma once

#include <iosfwd>

#include "plugins/cni/attachments_client.h"
#include "plugins/cni/invocation.h"

namespace rocenet::cni {

// The plugin with `connect` making the daemon client.
int Dispatch(const Environment& env, std::istream& in, std::ostream& out, std::ostream& err,
             const AttachmentsClientFactory& connect);

}  // namespace rocenet::cni
