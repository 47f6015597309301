// SPDX-License-Identifier: Apache-2.0
// The health: section of rocenetd's config file: when a link counts as
// flapping (health.flap_downs, flap_window, flap_stable) and whether
// LinkFlapping makes a port unhealthy (health.flap_unhealthy); when the
// RoCE transport counts as retransmitting (health.retransmit_rate,
// retransmit_quiet) and whether RetransmitsRising makes a port unhealthy
// (health.retransmit_unhealthy); when FEC's corrected and uncorrectable
// codewords come too fast (health.fec_corrected_rate,
// fec_uncorrectable_rate). Pure functions; errors are KeyErrors naming the
// key.
#pragma once

#include <set>
#include <string>

#include "absl/status/status.h"
#include "daemon/health/port_health.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::config {

const std::set<std::string>& HealthKeys();

// Applies the mapping `node` (the health: section) over `policies`:
// flap_downs 1..1000, flap_window 1s..24h, flap_stable 0s..24h (durations
// as "10m", "90s"), retransmit_rate (events a second) above 0 up to
// 1000000, retransmit_quiet 0s..24h, fec_corrected_rate (codewords a
// second) 0 (not watched) up to 1e12, fec_uncorrectable_rate (codewords a
// second over 10 minutes) 0 (any) up to 1e12, flap_unhealthy and
// retransmit_unhealthy true or false.
absl::Status ApplyHealth(const YAML::Node& node, const std::string& origin,
                         health::HealthPolicies& policies);

}  // namespace rocenet::config
