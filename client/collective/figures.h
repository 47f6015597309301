// SPDX-License-Identifier: Apache-2.0
// The busbw (hccl_demo's "NW Bandwidth") a healthy fabric should reach, per
// platform and test, as Habana publishes it, with where it says so. Where
// Habana publishes no figure the answer says that, and the report judges
// only against --expected-busbw. Pure data, thread-safe.
#pragma once

#include <string>

namespace rocenet::rocectl::collective {

struct ExpectedBusbw {
  double gbs = 0;      // 0: no published figure
  std::string source;  // the document, or why there is no figure
};

// `platform` is "gaudi2" or "gaudi3"; `test` a run_hccl_demo.py test name.
ExpectedBusbw PublishedBusbw(const std::string& platform, const std::string& test);

}  // namespace rocenet::rocectl::collective
