// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/plugins/cni/test_support.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "gtest/gtest.h"
#include "plugins/cni/dispatch.h"

namespace rocenet::cni::testutil {

nlohmann::ordered_json PluginRun::Json() const {
  nlohmann::ordered_json parsed =
      nlohmann::ordered_json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    ADD_FAILURE() << "stdout is not JSON: " << out;
    return nullptr;
  }
  return parsed;
}

PluginRun RunPlugin(const Environment& env, const std::string& config,
                    const AttachmentsClientFactory& connect) {
  std::istringstream in(config);
  std::ostringstream out;
  std::ostringstream err;
  PluginRun run;
  run.exit_code = Dispatch(env, in, out, err, connect);
  run.out = out.str();
  run.err = err.str();
  return run;
}

AttachmentsClientFactory NoDaemon() {
  return [](const DaemonEndpoint& endpoint) -> absl::StatusOr<std::unique_ptr<AttachmentsClient>> {
    ADD_FAILURE() << "the daemon was called (socket " << endpoint.socket_path << ")";
    return absl::InternalError("no daemon in this test");
  };
}

}  // namespace rocenet::cni::testutil
