// SPDX-License-Identifier: Apache-2.0
// Who the links of an RDMA run speak for (the ring form of the RDMA stage):
// which nodes a failure points at, and which nodes were not measured.
//
//   - A link failed when its measurement failed or came below the
//     threshold; it was measured when it was not skipped (no RDMA device,
//     no RoCE v2 GID, no tool).
//   - In a ring every node has two links per rail, one out and one in. A
//     node both of whose links of a rail failed is the suspect (a dead
//     port or node fails both; its neighbours each keep a sound link). A
//     failed link none of whose ends has another failed link leaves both
//     ends in doubt.
//   - A node is measured when, on every rail of the run, one of its links
//     was measured; one that is not is "not measured", with the reason of
//     its first skipped link, and neither gains nor loses a label.
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/diag/messages.h"

namespace rocenet::diag {

struct RdmaFindings {
  std::vector<Suspect> suspects;
  std::vector<UnmeasuredNode> unmeasured;
};

// `nodes`: every node of the run by name; `rails`: the rails run;
// `links`: every link measured or tried.
RdmaFindings JudgeRdmaLinks(const std::vector<std::string>& nodes,
                            const std::vector<std::string>& rails,
                            const std::vector<RdmaLink>& links);

}  // namespace rocenet::diag
