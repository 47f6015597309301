// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/metrics_exposer.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/listen_address.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"

namespace rocenet::os {

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsExposer(
    const std::string& address,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  ASSIGN_OR_RETURN(auto listen, ParseListenAddress(address));
  std::unique_ptr<prometheus::Exposer> exposer;
  // prometheus-cpp reports a port it cannot bind by throwing; it stops here.
  try {
    exposer = std::make_unique<prometheus::Exposer>(absl::StrCat(listen.first, ":", listen.second),
                                                    /*num_threads=*/1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", address, ": ", e.what()));
  }
  for (const std::shared_ptr<prometheus::Collectable>& c : collectables) {
    exposer->RegisterCollectable(c);
  }
  SPDLOG_INFO("serving metrics on http://{}:{}/metrics", listen.first,
              absl::StrJoin(exposer->GetListeningPorts(), ","));
  return exposer;
}

}  // namespace rocenet::os
