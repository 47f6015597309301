// SPDX-License-Identifier: Apache-2.0
#include "client/diag_args.h"

namespace rocenet::rocectl::diag {

absl::Status Only(const Args& args, std::vector<std::string> allowed, const std::string& test) {
  for (const auto& [name, value] : args.flags) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " does not apply to diag ", test));
    }
  }
  return absl::OkStatus();
}

void SetDeadline(const CommandContext& context, grpc::ClientContext* rpc, uint32_t bound_ms) {
  // The daemon bounds the test; give it that and some to answer.
  const absl::Duration wait =
      std::max(context.options.timeout, absl::Milliseconds(bound_ms) + absl::Seconds(20));
  rpc->set_deadline(absl::ToChronoTime(absl::Now() + wait));
}

}  // namespace rocenet::rocectl::diag
