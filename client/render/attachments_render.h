// SPDX-License-Identifier: Apache-2.0
// Attachments (ports handed to pods) as a table: `rocectl attachments`.
//
// Pure, no I/O, thread-safe. Ages are measured against the `now` passed in.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "rocenet/v1/attach.pb.h"

namespace rocenet::rocectl {

// POD (namespace/name) PORT (host name) IFNAME (in the pod) ADDRESS STATE
// AGE; `wide` adds PORT ID, CONTAINER, NETNS, MAC, MTU, TABLE, ROUTES and CNI.
// "No ports are attached to pods." when there are none.
std::string RenderAttachments(const v1::ListAttachmentsResponse& response, absl::Time now,
                              bool wide);

}  // namespace rocenet::rocectl
