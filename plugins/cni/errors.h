// SPDX-License-Identifier: Apache-2.0
// CNI error codes, the error object the plugin prints, and the mapping from
// rocenetd's answers to CNI codes.
//
// Errors travel through the plugin as absl::Status values that carry their
// CNI code as a payload (CniError(), CniCodeOf()), so parsing, the daemon
// client and the dispatcher share one error type and the code is decided
// where the cause is known. A status without the payload is reported as 999.
//
// The codes follow the CNI spec's "Well-known Error Codes" (0.4.0, 1.0.0,
// 1.1.0): 1-99 mean only what the spec says they mean; 50 is STATUS's
// "plugin not available" (1.1.0); 999 is what libcni uses for anything else.
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace rocenet::cni {

enum class CniCode : int {
  // cniVersion is not one rocenet speaks, or too old for the verb.
  kIncompatibleVersion = 1,
  // A configuration key rocenet knows but does not support; the message
  // names the key and its value.
  kUnsupportedField = 2,
  // A CNI_* variable is missing or invalid; the message names it.
  kInvalidEnvironment = 4,
  // stdin is not a JSON object.
  kDecodingFailure = 6,
  // The network configuration is valid JSON but a key is missing, has the
  // wrong type or a value rocenet cannot use; the message names the key.
  kInvalidNetworkConfig = 7,
  // Transient: rocenetd unreachable or slow, or the port is not ready yet.
  // The runtime retries.
  kTryAgainLater = 11,
  // STATUS only: rocenetd cannot serve ADD now.
  kPluginNotAvailable = 50,
  // Anything else.
  kInternal = 999,
};

// A failed status carrying `code`. `msg` is the short message (names the
// field or object and the reason); `details` the longer explanation, may be
// empty.
absl::Status CniError(CniCode code, absl::string_view msg, absl::string_view details = "");

// The CNI code of a failed status; kInternal when it carries none.
CniCode CniCodeOf(const absl::Status& status);

// The error object of the spec for a failed status:
// {"cniVersion", "code", "msg", "details"}. `details` is always present
// (possibly empty) so consumers need not special-case it.
nlohmann::ordered_json ErrorJson(absl::string_view cni_version, const absl::Status& status);

// The daemon call whose failure is being mapped; the same gRPC code means
// different things for different calls.
enum class DaemonCall { kAttach, kDetach, kCheck, kList, kGc };

// Maps a failed call to rocenetd to a CNI error. `daemon_status` carries
// the gRPC code (absl and gRPC share the numbers) and the daemon's message,
// which names the object and the reason and becomes the CNI msg:
//
//   UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED   -> 11 (retry)
//   INVALID_ARGUMENT   -> 7 when the message is about a configuration key
//                         (it starts with mtu, mode or deviceID), else 4
//                         (the CNI_* values: netns, ifname, container id)
//   NOT_FOUND          Attach: 7 (deviceID names no port of this node);
//                      Check: 999 (no such attachment: CHECK failed)
//   FAILED_PRECONDITION, RESOURCE_EXHAUSTED
//                      Check: 999 (the attachment differs from its record:
//                      a failed CHECK, which the runtime may treat as
//                      permanent); otherwise 11 (port busy, not yet
//                      provisioned, no free port: conditions that clear)
//   anything else      -> 999
//
// For kList (used by STATUS) every failure is 50, "plugin not available".
// DEL of an unknown attachment is not an error; the dispatcher handles it
// before calling this.
absl::Status DaemonError(DaemonCall call, const absl::Status& daemon_status);

}  // namespace rocenet::cni
