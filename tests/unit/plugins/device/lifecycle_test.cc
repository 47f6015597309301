// SPDX-License-Identifier: Apache-2.0
// PluginLifecycle in a directory of its own, with the kernel's inotify:
// another plugin's socket of the resource going away (a rolling update's
// old pod leaving) has the list sent again for a while; a socket of another
// resource going away does not.
#include "plugins/device/lifecycle.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "k8s/deviceplugin/v1beta1/api.grpc.pb.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::device {
namespace {

// Answers the dial that Serve() makes.
class OptionsOnly final : public v1beta1::DevicePlugin::Service {
  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions*) override {
    return grpc::Status::OK;
  }
};

// Polls `done` every 10 ms for up to `timeout`.
template <typename Fn>
bool Eventually(Fn done, absl::Duration timeout) {
  const absl::Time until = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > until) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST(PluginLifecycleTest, APredecessorLeavingHasTheListSentAgainForAWhile) {
  char tmpl[] = "/tmp/rocenet-lifecycle-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir(tmpl);
  const std::filesystem::path predecessor = dir / "rocenet.io_scale-out-port-old.sock";
  const std::filesystem::path stranger = dir / "vendor.example_gpu.sock";
  std::ofstream(predecessor.string()).put('x');
  std::ofstream(stranger.string()).put('x');

  std::atomic<int> calls{0};
  LifecycleOptions options;
  options.kubelet_dir = dir.string();
  options.socket_name = "rocenet.io_scale-out-port-new.sock";
  options.resource_name = "rocenet.io/scale-out-port";
  options.retry_interval = absl::Milliseconds(50);
  options.other_plugin_left = [&calls] { ++calls; };
  options.resend_every = absl::Milliseconds(20);
  options.resend_for = absl::Milliseconds(300);
  PluginLifecycle lifecycle(options, [] { return std::make_unique<OptionsOnly>(); });
  std::thread runner([&lifecycle] { EXPECT_OK(lifecycle.Run()); });
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(dir / options.socket_name); },
                         absl::Seconds(10)));

  std::filesystem::remove(stranger);
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(calls.load(), 0) << "another resource's plugin is none of ours";

  std::filesystem::remove(predecessor);
  EXPECT_TRUE(Eventually([&] { return calls.load() >= 5; }, absl::Seconds(5))) << calls.load();
  // And only for resend_for.
  absl::SleepFor(absl::Milliseconds(600));
  const int settled = calls.load();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(calls.load(), settled);

  lifecycle.Stop();
  runner.join();
  EXPECT_FALSE(std::filesystem::exists(dir / options.socket_name));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rocenet::device
