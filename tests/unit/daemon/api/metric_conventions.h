// SPDX-License-Identifier: Apache-2.0
// The naming conventions every rocenet metric family is held to
// (Prometheus and node_exporter practice, docs/metrics.md), for tests: each
// broken rule is a gtest failure naming the family.
#pragma once

#include <string>

#include "tests/unit/daemon/api/exposition_parser.h"

namespace rocenet::api::testing {

// Checks one parsed family: name, HELP, type and _total, units, labels.
void CheckFamily(const std::string& name, const ParsedFamily& family);

}  // namespace rocenet::api::testing
