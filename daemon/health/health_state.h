// SPDX-License-Identifier: Apache-2.0
// HealthStateCodec: what a HealthTracker remembers (each port's counter
// samples, flap history and held conditions, and when each condition
// began), as a JSON document, so that a restart of rocenetd (an upgrade)
// neither forgets a flapping port nor takes the counters' growth while it
// was away for a reset: the first look after the restart compares with
// the last one before it.
//
// The document names the boot it was written in (the kernel's boot_id):
// after a reboot every device and counter is new, and the boot clock the
// watches' instants are on starts again from zero, so a document of
// another boot restores nothing. The conditions' `since` are wall times,
// as users read them. Pure; thread-compatible.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "daemon/health/port_health.h"

namespace rocenet::health {

class HealthStateCodec {
 public:
  static std::string Save(const HealthTracker& tracker, const std::string& boot_id);

  // Replaces `tracker`'s memory with the document's. FailedPrecondition
  // when it was written in another boot; InvalidArgument, naming what is
  // wrong, when it is not such a document. `tracker` is unchanged on
  // either.
  static absl::Status Restore(absl::string_view text, const std::string& boot_id,
                              HealthTracker& tracker);
};

}  // namespace rocenet::health
