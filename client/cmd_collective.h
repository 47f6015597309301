// SPDX-License-Identifier: Apache-2.0
// `rocectl diag collective plan|report`: the collective stage of triage,
// run by Habana's hccl_demo as a Kubernetes job. `plan` prints the MPIJob or
// JobSet (client/collective/plan.h); `report` reads hccl_demo's log from a
// file or stdin and judges it (client/collective/report.h). Neither talks
// to rocenetd. Exit 0 pass, 6 the run found a failure, 2 bad flags or input.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/command.h"

namespace rocenet::rocectl {

// `args` are the words after "collective"; the flags are context.flags.
absl::Status RunCollective(const CommandContext& context, const std::vector<std::string>& args);

}  // namespace rocenet::rocectl
