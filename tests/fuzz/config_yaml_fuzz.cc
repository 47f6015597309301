// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for rocenetd's YAML configuration loader
// (config::ApplyConfigYaml, the code behind --config). Built and run by
// `tests/fuzz/run.sh config_yaml`; seeded with tests/fuzz/seeds/config_yaml/.
//
// Beyond "never crash, no undefined behaviour" (also in yaml-cpp's parser,
// which the loader must contain), it checks the loader's contract and aborts
// on a violation:
//   - a refusal is InvalidArgument and its message starts with the origin;
//   - a refused document changes nothing in the options it was applied to;
//   - an accepted document applied twice gives the same options, and
//     ValidateOptions() answers OK or InvalidArgument, never anything else.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/config/options.h"

namespace rocenet::config {
namespace {

constexpr char kOrigin[] = "config fuzz.yaml";

[[noreturn]] void Fail(const char* what, absl::string_view detail = "") {
  std::fprintf(stderr, "config_yaml_fuzz: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// The options the YAML keys set, as one string to compare.
std::string Fingerprint(const DaemonOptions& o) {
  std::string routes;
  for (const auto& route : o.static_routes)
    absl::StrAppend(&routes, route.destination.ToString(), ",");
  return absl::StrCat(
      o.socket_path, "|", o.sysfs_root, "|", o.metrics_address, "|", o.state_dir, "|",
      o.runtime_dir, "|", static_cast<int>(o.mode), "|", o.mtu, "|", o.routed_prefix_length, "|",
      routes, "|", o.outputs.gaudinet_path, "|", o.outputs.networkd_dir, "|",
      o.outputs.nfd_features_path, "|", o.outputs.nfd_label, "|", o.outputs.network_manager_path,
      "|", static_cast<int>(o.log_format), "|", static_cast<int>(o.log_level), "|",
      absl::StrJoin(o.selection.interfaces, ","), "|", absl::StrJoin(o.selection.drivers, ","), "|",
      o.selection.gaudi ? 1 : 0, "|", absl::StrJoin(o.selection.gaudi_scale_out_ports, ","));
}

}  // namespace
}  // namespace rocenet::config

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocenet::config;
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  DaemonOptions options;
  const std::string before = Fingerprint(options);
  const absl::Status status = ApplyConfigYaml(yaml, kOrigin, options);
  if (!status.ok()) {
    if (status.code() != absl::StatusCode::kInvalidArgument)
      Fail("not InvalidArgument:", status.ToString());
    if (!absl::StartsWith(status.message(), kOrigin))
      Fail("message without origin:", status.message());
    if (Fingerprint(options) != before) Fail("a refused document changed the options");
    return 0;
  }
  const std::string once = Fingerprint(options);
  DaemonOptions twice;
  if (!ApplyConfigYaml(yaml, kOrigin, twice).ok()) Fail("accepted once, refused the second time");
  if (Fingerprint(twice) != once) Fail("the same document gave different options");
  const absl::Status valid = ValidateOptions(options);
  if (!valid.ok() && valid.code() != absl::StatusCode::kInvalidArgument) {
    Fail("ValidateOptions: not InvalidArgument:", valid.ToString());
  }
  return 0;
}
