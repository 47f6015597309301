// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/security_files.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/unix_listener.h"

namespace rocenet::server {
namespace {

absl::Status Readable(absl::string_view key, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": file \"", path, "\" cannot be read"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSecurityFiles(const config::SecurityOptions& options) {
  if (!options.read_group.empty()) {
    absl::StatusOr<gid_t> gid = os::LookupGroup(options.read_group);
    if (!gid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("read_group (--read-group): ", gid.status().message()));
    }
  }
  const config::TlsListenerOptions& tls = options.tls;
  if (tls.address.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(Readable("tls.cert (--tls-cert)", tls.cert));
  RETURN_IF_ERROR(Readable("tls.key (--tls-key)", tls.key));
  if (!tls.client_ca.empty()) {
    RETURN_IF_ERROR(Readable("tls.client_ca (--tls-client-ca)", tls.client_ca));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::server
