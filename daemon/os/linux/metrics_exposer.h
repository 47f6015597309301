// SPDX-License-Identifier: Apache-2.0
// StartMetricsExposer: the Prometheus HTTP listener of a daemon (rocenetd,
// rocenet-diagd), serving `collectables` at /metrics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace rocenet::os {

// Listens on `address` ("host:port", port 0: any free port), registers the
// collectables, then logs "serving metrics on http://host:port/metrics" (the
// line tests wait for: every family is there once it is printed).
// The exposer holds `collectables` weakly: the caller keeps them alive as
// long as the exposer. InvalidArgument for an address that is not
// host:port; Unavailable naming the address when it cannot be bound.
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsExposer(
    const std::string& address,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

}  // namespace rocenet::os
