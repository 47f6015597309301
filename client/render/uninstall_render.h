// SPDX-License-Identifier: Apache-2.0
// What `rocectl uninstall` prints: rocenetd's answer to
// rocenet.v1.Lifecycle/Uninstall as two lists.
//
// Pure, no I/O, thread-safe.
#pragma once

#include <string>

#include "rocenet/v1/uninstall.pb.h"

namespace rocenet::rocectl {

// "Removed:" with one line per thing taken back, in the order it was done,
// or "Nothing was left to remove." when there was none; then, when
// something was kept, "Kept:" with one line per thing and its reason.
std::string RenderUninstall(const v1::UninstallResponse& response);

}  // namespace rocenet::rocectl
