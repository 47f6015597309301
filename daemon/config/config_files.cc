// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_files.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"

namespace rocenet::config {
namespace {

constexpr absl::string_view kMainFile = "config.yaml";

absl::Status Unreadable(const std::string& path, const absl::Status& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("config ", path, ": cannot be read: ", why.message()));
}

// config.yaml first, then the other documents by name.
bool AppliesBefore(const std::string& a, const std::string& b) {
  if ((a == kMainFile) != (b == kMainFile)) return a == kMainFile;
  return a < b;
}

}  // namespace

absl::StatusOr<std::vector<ConfigDocument>> ReadConfigDocuments(const os::FileSystem& fs,
                                                                const std::string& path) {
  absl::StatusOr<std::vector<std::string>> names = fs.ListDirectory(path);
  if (!names.ok()) {
    // Not a directory (or not there at all): read it as the one file.
    absl::StatusOr<std::string> text = fs.ReadFile(path);
    if (!text.ok()) return Unreadable(path, text.status());
    return std::vector<ConfigDocument>{{.path = path, .text = *std::move(text)}};
  }
  std::vector<std::string> yaml;
  for (const std::string& name : *names) {
    if (!absl::StartsWith(name, ".") && absl::EndsWith(name, ".yaml")) yaml.push_back(name);
  }
  if (yaml.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config ", path, ": a directory without any *.yaml file (expected ", kMainFile,
                     " and optional overrides)"));
  }
  std::sort(yaml.begin(), yaml.end(), AppliesBefore);
  const std::string dir = absl::EndsWith(path, "/") ? path : absl::StrCat(path, "/");
  std::vector<ConfigDocument> documents;
  for (const std::string& name : yaml) {
    const std::string file = absl::StrCat(dir, name);
    absl::StatusOr<std::string> text = fs.ReadFile(file);
    if (!text.ok()) return Unreadable(file, text.status());
    documents.push_back({.path = file, .text = *std::move(text)});
  }
  return documents;
}

absl::Status ApplyConfigDocuments(const std::vector<ConfigDocument>& documents,
                                  DaemonOptions& options) {
  DaemonOptions next = options;
  for (const ConfigDocument& document : documents) {
    RETURN_IF_ERROR(ApplyConfigYaml(document.text, absl::StrCat("config ", document.path), next));
  }
  options = std::move(next);
  return absl::OkStatus();
}

absl::Status ApplyConfigPath(const os::FileSystem& fs, const std::string& path,
                             DaemonOptions& options) {
  ASSIGN_OR_RETURN(std::vector<ConfigDocument> documents, ReadConfigDocuments(fs, path));
  return ApplyConfigDocuments(documents, options);
}

std::string ConfigFingerprint(const std::vector<ConfigDocument>& documents) {
  std::string out;
  for (const ConfigDocument& document : documents) {
    // Lengths first, so that no two different sets of documents concatenate
    // to the same string.
    absl::StrAppend(&out, document.path.size(), ":", document.path, document.text.size(), ":",
                    document.text);
  }
  return out;
}

}  // namespace rocenet::config
