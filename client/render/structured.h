// SPDX-License-Identifier: Apache-2.0
// Any API message as JSON or YAML, for `-o json` and `-o yaml`.
//
// Pure: message in, text out, no I/O; thread-safe. JSON is protobuf's own
// mapping with every field printed (so scripts can rely on a key being there)
// and the .proto field names (snake_case, e.g. "pci_address"), so what
// rocectl prints matches the API documentation and grpcurl. YAML is the same
// document converted, in block style. Errors are Internal statuses; they mean
// a bug, not bad input.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace rocenet::rocectl {

// Indented JSON ending in one newline.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// The same on one line, for streams of messages (one JSON document per line).
absl::StatusOr<std::string> ToJsonLine(const google::protobuf::Message& message);

// Block-style YAML of a JSON document, ending in one newline. JSON strings
// that YAML would read as something else ("123", "yes", "", MAC and PCI
// addresses, timestamps) are double-quoted, so they stay strings.
absl::StatusOr<std::string> JsonToYaml(absl::string_view json);

absl::StatusOr<std::string> ToYaml(const google::protobuf::Message& message);

}  // namespace rocenet::rocectl
