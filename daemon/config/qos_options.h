// SPDX-License-Identifier: Apache-2.0
// The qos: section of rocenetd's config file (qos.pfc, qos.pfc_unhealthy).
// Pure functions; errors are KeyErrors naming the key.
#pragma once

#include <set>
#include <string>

#include "absl/status/status.h"
#include "daemon/qos/pfc.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::config {

const std::set<std::string>& QosKeys();

// Applies the mapping `node` (the qos: section) over `pfc` and
// `pfc_unhealthy`. qos.pfc is keep, none, all, priorities as text ("0-3")
// or a list of priorities.
absl::Status ApplyQos(const YAML::Node& node, const std::string& origin, qos::PfcRequest& pfc,
                      bool& pfc_unhealthy);

}  // namespace rocenet::config
