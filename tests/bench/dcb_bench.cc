// SPDX-License-Identifier: Apache-2.0
// What a PFC read costs rocenetd on every pass over the ports: one dcbnl
// RTM_GETDCB (DcbLinux::GetPfc) per port, beside the ethtool query
// (ETHTOOL_GDRVINFO) the inventory already makes per port, on the same
// device in the same process. Here the device is lo: the kernel answers
// EOPNOTSUPP after looking the device up, as for every port without DCB;
// rocenetd asks such a port once per device and then not again. The ratio
// dcbnl/ethtool is what to watch.
//
//   dcb_bench [--iterations N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "daemon/os/linux/dcb_linux.h"
#include "daemon/os/linux/ethtool_linux.h"

namespace {

template <typename Fn>
double MicrosecondsPerCall(int iterations, Fn fn) {
  const absl::Time start = absl::Now();
  for (int i = 0; i < iterations; ++i) fn();
  return absl::ToDoubleMicroseconds(absl::Now() - start) / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = std::atoi(argv[++i]);
    // The smoke run of every benchmark passes a google-benchmark flag.
    if (std::strncmp(argv[i], "--benchmark_min_time", 20) == 0) iterations = 200;
  }
  auto dcb = rocenet::os::DcbLinux::Open();
  auto ethtool = rocenet::os::EthtoolLinux::Create();
  if (!dcb.ok() || !ethtool.ok()) {
    std::fprintf(stderr, "cannot open: %s %s\n", dcb.status().ToString().c_str(),
                 ethtool.status().ToString().c_str());
    return 1;
  }
  // Warm both paths.
  (*dcb)->GetPfc("lo").status().IgnoreError();
  (*ethtool)->Driver("lo").status().IgnoreError();
  const double dcbnl =
      MicrosecondsPerCall(iterations, [&] { (*dcb)->GetPfc("lo").status().IgnoreError(); });
  const double gdrvinfo =
      MicrosecondsPerCall(iterations, [&] { (*ethtool)->Driver("lo").status().IgnoreError(); });
  std::printf("dcbnl RTM_GETDCB IEEE_GET (lo):  %.2f us/call\n", dcbnl);
  std::printf("ethtool GDRVINFO (lo), the peer: %.2f us/call\n", gdrvinfo);
  std::printf("ratio dcbnl/ethtool: %.2f (%d calls each)\n", dcbnl / gdrvinfo, iterations);
  return 0;
}
