// SPDX-License-Identifier: Apache-2.0
// Where rocenetd's configuration comes from: one YAML file, or a directory of
// them (a Kubernetes ConfigMap volume with one key per file).
//
// In a directory, config.yaml is applied first and every other *.yaml file
// after it in name order, each over the ones before, key by key: a file that
// sets only `addressing: {mtu: 9000}` changes that key and nothing else
// (lists are replaced whole). Hidden names are skipped (a ConfigMap volume's
// ..data and timestamped directories), as is anything not ending in .yaml.
//
// Pure apart from reading through the FileSystem seam; errors are
// InvalidArgument naming the file and the reason.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/config/options.h"
#include "daemon/os/filesystem.h"

namespace rocenet::config {

struct ConfigDocument {
  std::string path;
  std::string text;
};

// The documents of `path` in the order they apply. A directory without a
// *.yaml file is an error: the ConfigMap or the mount is wrong, and running
// on defaults would hide that.
absl::StatusOr<std::vector<ConfigDocument>> ReadConfigDocuments(const os::FileSystem& fs,
                                                                const std::string& path);

// Applies `documents` in order on top of `options`; nothing changes when
// one of them is refused.
absl::Status ApplyConfigDocuments(const std::vector<ConfigDocument>& documents,
                                  DaemonOptions& options);

// ReadConfigDocuments and ApplyConfigDocuments.
absl::Status ApplyConfigPath(const os::FileSystem& fs, const std::string& path,
                             DaemonOptions& options);

// One string that changes whenever any document's name or content does: what
// a watcher compares to tell a real change from a touch.
std::string ConfigFingerprint(const std::vector<ConfigDocument>& documents);

}  // namespace rocenet::config
