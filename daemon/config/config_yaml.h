// SPDX-License-Identifier: Apache-2.0
// Reading rocenetd's config file: the error every key check returns, and the
// scalar reads shared by the files that read its sections. Pure functions.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::config {

// InvalidArgument "<origin>: key \"<key>\": <why>".
absl::Status KeyError(const std::string& origin, absl::string_view key, absl::string_view why);

// A quoted scalar ("9000") is a string in YAML, whatever it spells: a
// number or a boolean written so is a mistake worth naming.
bool IsQuoted(const YAML::Node& node);

// true or false, unquoted; anything else is a KeyError.
absl::StatusOr<bool> Bool(const YAML::Node& node, const std::string& origin, absl::string_view key);

// The value of a scalar node; anything else is a KeyError.
absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& origin,
                                   absl::string_view key);

}  // namespace rocenet::config
