// SPDX-License-Identifier: Apache-2.0
// Which keys a SIGHUP reload applies, which need a restart, and that every
// key of the config file has a reload rule.
#include "daemon/config/config_reload.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

DaemonOptions Load(const std::string& yaml) {
  DaemonOptions options;
  absl::Status s = ApplyConfigYaml(yaml, "config test.yaml", options);
  EXPECT_OK(s);
  EXPECT_OK(ValidateOptions(options));
  return options;
}

TEST(ReloadRulesTest, EveryConfigKeyHasARule) {
  std::set<std::string> ruled;
  for (const ReloadRule& rule : ReloadRules()) {
    EXPECT_TRUE(ruled.insert(rule.key).second) << "two rules for " << rule.key;
  }
  for (const std::string& key : ConfigKeys()) {
    EXPECT_TRUE(ruled.contains(key))
        << "config key " << key << " has no reload rule in daemon/server/config_reload.cc";
  }
  const std::vector<std::string> keys = ConfigKeys();
  for (const std::string& key : ruled) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end())
        << "reload rule for " << key << ", which the config file does not accept";
  }
}

TEST(PlanReloadTest, SameConfigChangesNothing) {
  const DaemonOptions running = Load("log_level: info\ninterfaces: [so0]\n");
  ReloadPlan plan = PlanReload(running, running);
  EXPECT_THAT(plan.applied, IsEmpty());
  EXPECT_THAT(plan.needs_restart, IsEmpty());
}

TEST(PlanReloadTest, LiveKeysAreAppliedOthersKeptAndReported) {
  const DaemonOptions running = Load(R"(
log_level: info
socket: /run/rocenet/a.sock
interfaces: [so0]
addressing:
  routed_prefix_length: 16
limits:
  mutating_rpc_burst: 10
)");
  const DaemonOptions loaded = Load(R"(
log_level: debug
socket: /run/rocenet/b.sock
interfaces: [so0, so1]
addressing:
  routed_prefix_length: 15
  static_routes: [10.210.0.0/16]
  reserved_networks: [10.128.0.0/14, 172.30.0.0/16]
limits:
  mutating_rpc_burst: 20
)");
  ReloadPlan plan = PlanReload(running, loaded);
  EXPECT_THAT(
      plan.applied,
      ElementsAre("log_level", "limits.mutating_rpc_burst", "addressing.routed_prefix_length",
                  "addressing.static_routes", "addressing.reserved_networks"));
  EXPECT_THAT(plan.needs_restart, ElementsAre("socket", "interfaces"));
  EXPECT_EQ(plan.next.log_level, spdlog::level::debug);
  EXPECT_EQ(plan.next.routed_prefix_length, 15);
  ASSERT_EQ(plan.next.static_routes.size(), 1u);
  EXPECT_THAT(plan.next.reserved_networks, ElementsAre(P("10.128.0.0/14"), P("172.30.0.0/16")));
  EXPECT_EQ(plan.next.security.limits.mutating_rpc_burst, 20);
  // Kept as they run until a restart.
  EXPECT_EQ(plan.next.socket_path, "/run/rocenet/a.sock");
  EXPECT_THAT(plan.next.selection.interfaces, ElementsAre("so0"));
}

TEST(PlanReloadTest, TheCniPluginPathNeedsARestart) {
  const DaemonOptions running = Load("outputs:\n  cni_plugin: /host/cni/bin/rocenet\n");
  const DaemonOptions loaded = Load("outputs:\n  cni_plugin: \"\"\n");
  ReloadPlan plan = PlanReload(running, loaded);
  EXPECT_THAT(plan.applied, IsEmpty());
  EXPECT_THAT(plan.needs_restart, ElementsAre("outputs.cni_plugin"));
  EXPECT_EQ(plan.next.outputs.cni_plugin_path, "/host/cni/bin/rocenet");
}

TEST(PlanReloadTest, ReadGroupAndTlsListener) {
  const DaemonOptions running = Load("read_group: \"\"\n");
  const DaemonOptions loaded = Load(R"(
read_group: "0"
tls:
  address: 127.0.0.1:0
  cert: /etc/rocenet/tls.crt
  key: /etc/rocenet/tls.key
)");
  ReloadPlan plan = PlanReload(running, loaded);
  EXPECT_THAT(plan.applied, ElementsAre("read_group"));
  EXPECT_THAT(plan.needs_restart, ElementsAre("tls.address", "tls.cert", "tls.key"));
  EXPECT_EQ(plan.next.security.read_group, "0");
  EXPECT_TRUE(plan.next.security.tls.address.empty());
}

}  // namespace
}  // namespace rocenet::config
