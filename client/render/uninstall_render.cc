// SPDX-License-Identifier: Apache-2.0
#include "client/render/uninstall_render.h"

#include "absl/strings/str_cat.h"

namespace rocenet::rocectl {

std::string RenderUninstall(const v1::UninstallResponse& response) {
  std::string out;
  if (response.removed().empty()) {
    out = "Nothing was left to remove.\n";
  } else {
    out = "Removed:\n";
    for (const v1::UninstallItem& item : response.removed()) {
      absl::StrAppend(&out, "  ", item.what(), "\n");
    }
  }
  if (!response.kept().empty()) {
    absl::StrAppend(&out, "Kept:\n");
    for (const v1::UninstallItem& item : response.kept()) {
      absl::StrAppend(&out, "  ", item.what(), ": ", item.reason(), "\n");
    }
  }
  return out;
}

}  // namespace rocenet::rocectl
