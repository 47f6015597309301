// SPDX-License-Identifier: Apache-2.0
// `rocectl diag reach|bandwidth|allreduce|incast`: the triage tests of
// rocenet.v1.Diagnostics, run by the local rocenet-diagd with the other
// nodes' over the scale-out ports. Progress goes to stderr while a test
// runs; the result is a table (or -o json|yaml: the result message) on
// stdout. Exit 6 when the test ran and found a failure. See command.h for
// the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

// The test ran and found something wrong (unreachable pair, broken rail,
// failed stream, bandwidth below --min-fraction).
inline constexpr int kExitDiagFailed = 6;
// The test found no failure, but some of its nodes were not measured (their
// rail's links skipped: no RDMA device, GID or tool; their rocenet-diagd
// silent): no pass is claimed for them.
inline constexpr int kExitDiagNotMeasured = 8;

const Command& DiagCommand();

}  // namespace rocenet::rocectl
