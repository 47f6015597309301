// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/options.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "daemon/config/config_files.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::config {
namespace {

absl::Status Apply(const std::string& yaml, DaemonOptions& options) {
  return ApplyConfigYaml(yaml, "config test.yaml", options);
}

void ExpectError(const std::string& yaml, const std::string& fragment) {
  DaemonOptions options;
  const DaemonOptions before = options;
  absl::Status status = Apply(yaml, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << yaml;
  EXPECT_NE(status.message().find(fragment), absl::string_view::npos)
      << "message: " << status.message() << "\nwanted: " << fragment;
  EXPECT_NE(status.message().find("config test.yaml"), absl::string_view::npos);
  // A rejected file changes nothing.
  EXPECT_EQ(options.socket_path, before.socket_path);
  EXPECT_EQ(options.selection.interfaces, before.selection.interfaces);
}

TEST(OptionsTest, FullConfigIsApplied) {
  DaemonOptions options;
  ASSERT_TRUE(Apply(R"(
socket: /run/x/r.sock
sysfs_root: /tmp/sys
metrics_address: 127.0.0.1:9000
state_dir: /var/lib/x
runtime_dir: /run/x
hcl_dir: /run/x/hcl
diag_port: 0
node_name: gaudi-17
mode: L2
log_format: json
log_level: debug
interfaces: ["so*", eth2]
drivers: [mlx5_core]
gaudi:
  enabled: false
  scale_out_ports: [8, 22, 23]
)",
                    options)
                  .ok());
  EXPECT_EQ(options.socket_path, "/run/x/r.sock");
  EXPECT_EQ(options.sysfs_root, "/tmp/sys");
  EXPECT_EQ(options.metrics_address, "127.0.0.1:9000");
  EXPECT_EQ(options.state_dir, "/var/lib/x");
  EXPECT_EQ(RuntimeDirOf(options), "/run/x");
  EXPECT_EQ(options.hcl_dir, "/run/x/hcl");
  // The diagnostics' keys moved to rocenet-diagd: accepted, named, ignored.
  EXPECT_EQ(options.moved_to_diagd, (std::set<std::string>{"diag_port", "node_name"}));
  EXPECT_EQ(options.mode, AddressingMode::kL2);
  EXPECT_EQ(options.log_format, LogFormat::kJson);
  EXPECT_EQ(options.log_level, spdlog::level::debug);
  EXPECT_EQ(options.selection.interfaces, (std::vector<std::string>{"so*", "eth2"}));
  EXPECT_EQ(options.selection.drivers, (std::vector<std::string>{"mlx5_core"}));
  EXPECT_FALSE(options.selection.gaudi);
  EXPECT_EQ(options.selection.gaudi_scale_out_ports, (std::set<int>{8, 22, 23}));
  EXPECT_OK(ValidateOptions(options));
}

TEST(OptionsTest, EmptyFileSetsNothing) {
  DaemonOptions options;
  EXPECT_OK(Apply("", options));
  EXPECT_EQ(options.socket_path, "/run/rocenet/rocenetd.sock");
}

TEST(OptionsTest, RuntimeDirDefaultsToTheSocketsDirectory) {
  DaemonOptions options;
  EXPECT_EQ(RuntimeDirOf(options), "/run/rocenet");
  options.socket_path = "/r.sock";
  EXPECT_EQ(RuntimeDirOf(options), "/");
}

TEST(OptionsTest, BadFilesAreRejectedNamingTheKey) {
  ExpectError("socket: [unclosed", "not valid YAML");
  ExpectError("- a\n- b\n", "must be a mapping");
  ExpectError("sockett: /x\n", "key \"sockett\": unknown key");
  ExpectError("gaudi:\n  enable: true\n", "key \"gaudi.enable\": unknown key");
  ExpectError("gaudi: yes-please\n", "key \"gaudi\": must be a mapping");
  ExpectError("gaudi:\n  enabled: maybe\n", "key \"gaudi.enabled\": must be true or false");
  ExpectError("gaudi:\n  scale_out_ports: [x]\n", "gaudi.scale_out_ports");
  ExpectError("mode: L4\n", "key \"mode\": mode \"L4\" is not one of: L3, L2");
  ExpectError("log_format: xml\n", "key \"log_format\"");
  ExpectError("log_level: loud\n", "key \"log_level\"");
  ExpectError("interfaces: so0\n", "key \"interfaces\": must be a list of strings");
  ExpectError("interfaces: [[so0]]\n", "key \"interfaces\"");
  ExpectError("socket: {a: b}\n", "key \"socket\": must be a string");
}

TEST(OptionsTest, UnknownKeysSuggestTheKeyMeantAtItsLevel) {
  ExpectError("sockett: /x\n", "key \"sockett\": unknown key; did you mean \"socket\"?");
  ExpectError("gaudi:\n  enable: true\n",
              "key \"gaudi.enable\": unknown key; did you mean \"gaudi.enabled\"?");
  ExpectError("mtu: 9000\n",
              "key \"mtu\": unknown key; did you mean \"addressing.mtu\" (under addressing:)?");
  ExpectError("addressing:\n  mode: L2\n",
              "key \"addressing.mode\": unknown key; did you mean \"mode\" (a top-level key)?");
  ExpectError("adressing:\n  mtu: 9000\n", "did you mean \"addressing\"?");
  ExpectError("frobnicate: 1\n", "key \"frobnicate\": unknown key");
}

TEST(OptionsTest, ValuesAreTypeChecked) {
  ExpectError("addressing:\n  mtu: \"9000\"\n",
              "key \"addressing.mtu\": must be an integer, not the string \"9000\" (write it "
              "without quotes)");
  ExpectError("gaudi:\n  scale_out_ports: [8, 99]\n",
              "key \"gaudi.scale_out_ports\": port index 99 is not a Gaudi NIC index (0..23)");
  ExpectError("gaudi:\n  scale_out_ports: [\"8\"]\n", "must be a list of port indices");
  ExpectError("gaudi:\n  enabled: \"true\"\n", "must be true or false");
  ExpectError("addressing:\n  reserved_networks: 10.128.0.0/14\n", "must be a list of strings");
  ExpectError("addressing:\n  reserved_networks: [10.128.0.0]\n",
              "key \"addressing.reserved_networks\"");
  ExpectError("limits:\n  max_string_bytes: \"64\"\n", "must be a positive integer");
}

TEST(OptionsTest, ValidationNamesTheBadValue) {
  struct Case {
    std::function<void(DaemonOptions&)> mutate;
    const char* fragment;
  } cases[] = {
      {[](DaemonOptions& o) { o.socket_path = "relative.sock"; }, "must be an absolute path"},
      {[](DaemonOptions& o) { o.socket_path = "/" + std::string(120, 'x'); }, "longer than 107"},
      {[](DaemonOptions& o) { o.state_dir = "state"; }, "state_dir"},
      {[](DaemonOptions& o) { o.runtime_dir = "run"; }, "runtime_dir \"run\""},
      {[](DaemonOptions& o) { o.hcl_dir = "hcl"; }, "hcl_dir \"hcl\""},
      {[](DaemonOptions& o) { o.outputs.cni_plugin_path = "cni/bin/rocenet"; },
       "outputs: path \"cni/bin/rocenet\" must be absolute"},
      {[](DaemonOptions& o) { o.metrics_address = "localhost"; }, "metrics_address"},
      {[](DaemonOptions& o) { o.metrics_address = ":99999"; }, "metrics_address"},
      {[](DaemonOptions& o) { o.selection.interfaces = {"bad/name"}; }, "\"bad/name\""},
      {[](DaemonOptions& o) { o.selection.interfaces = {"ens[1"}; }, "\"ens[1\""},
      {[](DaemonOptions& o) { o.outputs.network_manager_path = "90-rocenet.conf"; },
       "\"90-rocenet.conf\" must be absolute"},
      {[](DaemonOptions& o) { o.reserved_networks = {*Ipv4Prefix::Parse("10.129.0.0/14")}; },
       "addressing: reserved_networks[0] 10.129.0.0/14 has host bits set"},
  };
  for (const Case& c : cases) {
    DaemonOptions options;
    c.mutate(options);
    absl::Status status = ValidateOptions(options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.fragment;
    EXPECT_NE(status.message().find(c.fragment), absl::string_view::npos) << status;
  }
}

TEST(OptionsTest, CniPluginIsNeverRemovedUnlessConfigured) {
  EXPECT_EQ(DaemonOptions().outputs.cni_plugin_path, "");
  DaemonOptions options;
  ASSERT_OK(Apply("outputs:\n  cni_plugin: /host/cni/bin/rocenet\n", options));
  EXPECT_EQ(options.outputs.cni_plugin_path, "/host/cni/bin/rocenet");
  EXPECT_OK(ValidateOptions(options));
  ExpectError("outputs:\n  cni_plugin: [a]\n", "outputs.cni_plugin");
}

TEST(OptionsTest, HclDirDefaultsToTheDevicePluginsDirectoryAndEmptyTurnsItOff) {
  EXPECT_EQ(DaemonOptions().hcl_dir, "/run/rocenet/hcl");
  DaemonOptions options;
  ASSERT_OK(Apply("hcl_dir: \"\"\n", options));
  EXPECT_EQ(options.hcl_dir, "");
  EXPECT_OK(ValidateOptions(options));
}

TEST(OptionsTest, NetworkManagerDropInIsOffUnlessGiven) {
  EXPECT_EQ(DaemonOptions().outputs.network_manager_path, "");
  DaemonOptions options;
  ASSERT_OK(
      Apply("outputs:\n  network_manager: /etc/NetworkManager/conf.d/90-rocenet.conf\n", options));
  EXPECT_EQ(options.outputs.network_manager_path, "/etc/NetworkManager/conf.d/90-rocenet.conf");
  EXPECT_OK(ValidateOptions(options));
}

TEST(OptionsTest, ListenAddress) {
  auto any = ParseListenAddress(":50152");
  ASSERT_OK(any);
  EXPECT_EQ(any->first, "0.0.0.0");
  EXPECT_EQ(any->second, 50152);
  auto local = ParseListenAddress("127.0.0.1:0");
  ASSERT_OK(local);
  EXPECT_EQ(local->second, 0);
}

TEST(OptionsTest, MissingFileIsAnError) {
  DaemonOptions options;
  absl::Status status =
      ApplyConfigPath(os::FileSystemLinux(), "/nonexistent/rocenet.yaml", options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("/nonexistent/rocenet.yaml"), absl::string_view::npos);
}

}  // namespace
}  // namespace rocenet::config

namespace rocenet::config {
namespace {

TEST(OptionsTest, QosPfcTakesEveryForm) {
  struct Case {
    const char* yaml;
    const char* parsed;
  } cases[] = {
      {"qos:\n  pfc: keep\n", "keep"}, {"qos:\n  pfc: none\n", "none"},
      {"qos:\n  pfc: all\n", "all"},   {"qos:\n  pfc: \"0-3\"\n", "0-3"},
      {"qos:\n  pfc: 3\n", "3"},       {"qos:\n  pfc: [0, 1, 2, 3]\n", "0-3"},
  };
  for (const Case& c : cases) {
    DaemonOptions options;
    ASSERT_OK(Apply(c.yaml, options)) << c.yaml;
    EXPECT_EQ(qos::FormatPfcRequest(options.pfc), c.parsed) << c.yaml;
  }
  DaemonOptions options;
  ASSERT_OK(Apply("qos:\n  pfc_unhealthy: true\n", options));
  EXPECT_TRUE(options.pfc_unhealthy);
  EXPECT_EQ(options.pfc.kind, qos::PfcRequest::Kind::kKeep) << "keep is the default";
}

TEST(OptionsTest, QosPfcRefusesWhatIsNoPriority) {
  ExpectError("qos:\n  pfc: [0, 9]\n",
              "key \"qos.pfc\": PFC \"0,9\": \"9\" is not within priorities 0..7");
  ExpectError("qos:\n  pfc: []\n", "key \"qos.pfc\": an empty list; write none for no PFC");
  ExpectError("qos:\n  pfc: [\"3\"]\n", "must be keep, none, all or a list of priorities 0..7");
  ExpectError("qos:\n  pfc: off\n", "use keep, none, all, or priorities 0..7");
  ExpectError("qos:\n  pfc_unhealthy: yes\n", "key \"qos.pfc_unhealthy\": must be true or false");
  ExpectError("qos:\n  pcf: all\n", "did you mean \"qos.pfc\"");
  ExpectError("pfc: all\n", "did you mean \"qos.pfc\"");
}

TEST(OptionsTest, HealthSetsWhenALinkIsFlapping) {
  DaemonOptions options;
  EXPECT_EQ(options.health.flaps.downs, 3);
  EXPECT_EQ(options.health.flaps.window, absl::Minutes(10));
  ASSERT_OK(
      Apply("health:\n  flap_downs: 5\n  flap_window: 30m\n  flap_stable: 90s\n"
            "  flap_unhealthy: false\n",
            options));
  EXPECT_EQ(options.health.flaps.downs, 5);
  EXPECT_EQ(options.health.flaps.window, absl::Minutes(30));
  EXPECT_EQ(options.health.flaps.stable_for, absl::Seconds(90));
  EXPECT_FALSE(options.health.flaps.unhealthy);
  ExpectError("health:\n  flap_downs: 0\n",
              "key \"health.flap_downs\": must be a whole number from 1 to 1000");
  ExpectError("health:\n  flap_downs: \"3\"\n", "must be a whole number from 1 to 1000");
  ExpectError("health:\n  flap_window: 0s\n",
              "key \"health.flap_window\": \"0s\" is not a duration from 1s to 24h");
  ExpectError("health:\n  flap_stable: 2d\n", "\"2d\" is not a duration from 0 to 24h");
  ExpectError("health:\n  flap_unhealthy: maybe\n", "must be true or false");
  ExpectError("health:\n  flap_down: 3\n", "did you mean \"health.flap_downs\"");
  EXPECT_EQ(options.health.retransmits.events_per_second, 1.0);
  ASSERT_OK(
      Apply("health:\n  retransmit_rate: 2.5\n  retransmit_quiet: 0s\n"
            "  retransmit_unhealthy: true\n",
            options));
  EXPECT_EQ(options.health.retransmits.events_per_second, 2.5);
  EXPECT_EQ(options.health.retransmits.quiet_period, absl::ZeroDuration());
  EXPECT_TRUE(options.health.retransmits.unhealthy);
  ExpectError("health:\n  retransmit_rate: 0\n",
              "key \"health.retransmit_rate\": must be a number of events a second above 0 "
              "and at most 1000000");
  ExpectError("health:\n  retransmit_rate: nan\n", "must be a number of events a second");
  ExpectError("health:\n  retransmit_quiet: -1s\n", "is not a duration from 0 to 24h");
  EXPECT_EQ(options.health.fec.corrected_per_second, 0.0);
  ASSERT_OK(Apply("health:\n  fec_corrected_rate: 250000\n", options));
  EXPECT_EQ(options.health.fec.corrected_per_second, 250000.0);
  ExpectError("health:\n  fec_corrected_rate: -1\n",
              "key \"health.fec_corrected_rate\": must be a number of codewords a second from 0 "
              "(not watched) to 1e12");
  // Uncorrectable FEC codewords: 0.01 a second over 10 minutes unless set;
  // 0 is any one.
  EXPECT_EQ(options.health.fec.uncorrectable_per_second, 0.01);
  ASSERT_OK(Apply("health:\n  fec_uncorrectable_rate: 0\n", options));
  EXPECT_EQ(options.health.fec.uncorrectable_per_second, 0.0);
  ASSERT_OK(Apply("health:\n  fec_uncorrectable_rate: 0.5\n", options));
  EXPECT_EQ(options.health.fec.uncorrectable_per_second, 0.5);
  for (const char* bad : {"-0.01", "\"0.01\"", "nan", "inf", "1e13", "fast"}) {
    ExpectError(absl::StrCat("health:\n  fec_uncorrectable_rate: ", bad, "\n"),
                "key \"health.fec_uncorrectable_rate\": must be a number of codewords a second "
                "from 0 (any one raises FecDegraded) to 1e12");
  }
  ExpectError("health: 3\n", "key \"health\": must be a mapping");
}

}  // namespace
}  // namespace rocenet::config
