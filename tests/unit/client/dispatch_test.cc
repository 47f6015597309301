// SPDX-License-Identifier: Apache-2.0
// rocectl end to end, in process: the dispatcher against a fake rocenetd on a
// unix socket in a temporary directory.
#include "client/dispatch.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/client/fake_rocenetd.h"
#include "tests/unit/client/test_support.h"
#include "tests/unit/support/status_matchers.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::rocenet::rocectl::testutil::FakeData;
using ::rocenet::rocectl::testutil::FakeRocenetd;
using ::rocenet::rocectl::testutil::Rocectl;
using ::rocenet::rocectl::testutil::SampleNode;
using ::rocenet::rocectl::testutil::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

using Result = ::rocenet::rocectl::testutil::CliResult;

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.Join("rocenetd.sock");
    data_ = SampleNode(absl::Now());
  }

  void StartDaemon() {
    daemon_ = FakeRocenetd::Start(socket_, data_);
    ASSERT_NE(daemon_, nullptr);
  }

  TempDir dir_;
  std::string socket_;
  FakeData data_;
  std::unique_ptr<FakeRocenetd> daemon_;
};

TEST_F(DispatchTest, PortsJsonIsTheListPortsResponse) {
  StartDaemon();
  const Result result = Rocectl({"--socket", socket_, "ports", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, IsEmpty());
  EXPECT_THAT(result.out, HasSubstr("\"pci_address\": \"0000:33:00.0\""));
  v1::ListPortsResponse printed;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(result.out, &printed));
  EXPECT_TRUE(MessageDifferencer::Equals(printed, data_.ports)) << printed.DebugString();
}

TEST_F(DispatchTest, PortsTableWithFlagsAfterTheCommand) {
  StartDaemon();
  const Result result = Rocectl({"ports", "--socket", socket_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith("NAME   ID                STATE   MTU    SPEED   MAC"));
  EXPECT_THAT(result.out, HasSubstr("\nso1    0000:33:00.0-p1   up      8000   100G    "));
  EXPECT_THAT(result.out, HasSubstr("\nso2    0000:33:00.0-p2   down    8000   -       "));
}

TEST_F(DispatchTest, PortsWide) {
  StartDaemon();
  const Result result = Rocectl({"ports", "--socket", socket_, "-o=wide"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("PERM MAC"));
  EXPECT_THAT(result.out, HasSubstr("gaudi-sysfs"));
}

TEST_F(DispatchTest, PortsGetByNameAndById) {
  StartDaemon();
  Result result = Rocectl({"ports", "get", "so2", "--socket", socket_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\nso2 "));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("so1")));

  result = Rocectl({"ports", "get", "0000:33:00.0-p1", "--socket", socket_, "-o", "yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const YAML::Node port = YAML::Load(result.out);
  EXPECT_EQ(port["name"].as<std::string>(), "so1");
  EXPECT_EQ(port["pci_address"].as<std::string>(), "0000:33:00.0");
}

TEST_F(DispatchTest, PortsGetUnknownPortIsExitFour) {
  StartDaemon();
  const Result result = Rocectl({"--socket", socket_, "ports", "get", "so9"});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.err, "rocectl ports get so9: port \"so9\" not found\n");
  EXPECT_THAT(result.out, IsEmpty());
}

TEST_F(DispatchTest, HealthNodeLineAndTable) {
  StartDaemon();
  const Result result = Rocectl({"--socket", socket_, "health"});
  // Not ready is still exit 0: waiting for readiness is `wait --ready`.
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "node ready: no (1/2 ports healthy)\n"
            "PORT   HEALTHY   CONDITIONS             SINCE\n"
            "so1    yes       -                      2h\n"
            "so2    no        LinkDown/CarrierLost   5m\n");
}

TEST_F(DispatchTest, HealthOfOnePortAndJson) {
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "health", "so2", "-o", "wide"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("port so2: no carrier"));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("node ready")));

  result = Rocectl({"--socket", socket_, "health", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  v1::NodeHealth printed;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(result.out, &printed));
  EXPECT_TRUE(MessageDifferencer::Equals(printed, data_.health));

  result = Rocectl({"--socket", socket_, "health", "so9"});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.err, "rocectl health so9: port \"so9\" not found\n");
}

TEST_F(DispatchTest, NeighborsTable) {
  StartDaemon();
  const Result result = Rocectl({"--socket", socket_, "neighbors"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "PORT   CHASSIS             PORT ID       SYSTEM NAME   DESCRIPTION              "
            "TTL    AGE\n"
            "so1    02:5e:00:ff:00:01   Ethernet1/1   leaf1         no-alert 10.200.1.2/30   "
            "120s   10m\n"
            "so2    (aged out 5m ago)   -             -             -                        "
            "-      -\n");
}

TEST_F(DispatchTest, NeighborsOfOnePortWideAndJson) {
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "neighbors", "so1", "-o", "wide"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("MGMT ADDRESS   CAPABILITIES   FRAMES   EXPIRES IN   SWITCH PFC"
                                    "   PORT PFC\n"));
  EXPECT_THAT(result.out, HasSubstr("   10.0.0.1       Router         21       "));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("so2")));

  result = Rocectl({"--socket", socket_, "neighbors", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\"enabled_priorities\": ["));
  v1::ListNeighborsResponse printed;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(result.out, &printed));
  EXPECT_TRUE(MessageDifferencer::Equals(printed, data_.neighbors)) << printed.DebugString();

  result = Rocectl({"--socket", socket_, "neighbors", "so2", "-o", "yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const YAML::Node yaml = YAML::Load(result.out);
  EXPECT_EQ(yaml["ports"][0]["lost"].as<std::string>(), "AgedOut");
}

TEST_F(DispatchTest, NeighborsOfUnknownPortIsExitFour) {
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "neighbors", "so9"});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.err, "rocectl neighbors so9: port \"so9\" not found\n");
  EXPECT_THAT(result.out, IsEmpty());
  result = Rocectl({"--socket", socket_, "neighbors", "so1", "so2"});
  EXPECT_EQ(result.exit_code, 2);
}

TEST_F(DispatchTest, AddressingTable) {
  StartDaemon();
  const Result result = Rocectl({"--socket", socket_, "addressing"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "mode: L3, 1/2 ports provisioned\n"
            "PORT   STATE     LOCAL           PEER         ROUTES          PROVISIONED   REASON\n"
            "so1    ready     10.200.1.1/30   10.200.1.2   10.200.0.0/16   yes           -\n"
            "so2    pending   -               -            -               no            "
            "NoLldpNeighbor\n");
}

TEST_F(DispatchTest, AddressingOfOnePortWideAndYaml) {
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "addressing", "0000:33:00.0-p2", "-o", "wide"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("port so2: no LLDP neighbor\n"));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("so1")));

  result = Rocectl({"--socket", socket_, "addressing", "-o", "yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const YAML::Node yaml = YAML::Load(result.out);
  EXPECT_EQ(yaml["mode"].as<std::string>(), "L3");
  EXPECT_EQ(yaml["plans"][0]["state"].as<std::string>(), "PLAN_STATE_READY");
  EXPECT_EQ(yaml["plans"][0]["applied"]["local"].as<std::string>(), "10.200.1.1/30");

  result = Rocectl({"--socket", socket_, "addressing", "so9"});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.err, "rocectl addressing so9: port \"so9\" not found\n");
}

TEST_F(DispatchTest, ReconcileCallsTheDaemonAndPrintsThePlans) {
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "reconcile"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(daemon_->reconcile_calls(), 1);
  EXPECT_THAT(result.out, StartsWith("mode: L3, 1/2 ports provisioned\nPORT   STATE"));

  result = Rocectl({"--socket", socket_, "reconcile", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  v1::ListPlansResponse printed;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(result.out, &printed));
  EXPECT_TRUE(MessageDifferencer::Equals(printed, data_.plans));

  result = Rocectl({"--socket", socket_, "reconcile", "so1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("reconcile takes no arguments"));
  EXPECT_EQ(daemon_->reconcile_calls(), 2);
}

TEST_F(DispatchTest, UninstallCallsTheDaemonAndPrintsWhatWentAndWhatStayed) {
  v1::UninstallItem* removed = data_.uninstall.add_removed();
  removed->set_what("address 10.200.1.1/30 on so1");
  v1::UninstallItem* kept = data_.uninstall.add_kept();
  kept->set_what("port so2 in pod training/job-1 (net1 in /var/run/netns/a)");
  kept->set_reason("in the pod's network namespace");
  StartDaemon();
  Result result = Rocectl({"--socket", socket_, "uninstall"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(daemon_->uninstall_calls(), 1);
  EXPECT_EQ(result.out,
            "Removed:\n  address 10.200.1.1/30 on so1\nKept:\n"
            "  port so2 in pod training/job-1 (net1 in /var/run/netns/a): in the pod's network "
            "namespace\n");

  result = Rocectl({"--socket", socket_, "uninstall", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  v1::UninstallResponse printed;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(result.out, &printed));
  EXPECT_TRUE(MessageDifferencer::Equals(printed, data_.uninstall));

  result = Rocectl({"--socket", socket_, "uninstall", "so1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("uninstall takes no arguments"));
  EXPECT_EQ(daemon_->uninstall_calls(), 2);
}

TEST_F(DispatchTest, ReconcileWithoutDaemonIsExitThree) {
  const Result result = Rocectl({"--socket", socket_, "reconcile"});
  EXPECT_EQ(result.exit_code, 3);
}

TEST_F(DispatchTest, MissingSocketIsExitThree) {
  const Result result = Rocectl({"--socket", socket_, "ports"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.err, "rocectl ports: cannot reach rocenetd: socket " + socket_ +
                            " does not exist (is rocenetd running? set --socket)\n");
  EXPECT_THAT(result.out, IsEmpty());
}

TEST_F(DispatchTest, RegularFileIsExitThree) {
  testutil::WriteFile(socket_);
  const Result result = Rocectl({"--socket", socket_, "health"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_THAT(result.err, HasSubstr("is not a socket"));
}

TEST_F(DispatchTest, StaleSocketIsConnectionRefused) {
  const int fd = testutil::BindUnixSocket(socket_, /*listen=*/false);
  ASSERT_GE(fd, 0);
  const Result result = Rocectl({"--socket", socket_, "ports"});
  close(fd);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.err, "rocectl ports: cannot reach rocenetd: connection refused on socket " +
                            socket_ + " (is rocenetd running?)\n");
}

TEST_F(DispatchTest, SlowDaemonHitsTheTimeout) {
  data_.delay = absl::Seconds(10);
  StartDaemon();
  const absl::Time start = absl::Now();
  const Result result = Rocectl({"--socket", socket_, "--timeout", "200ms", "health"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_THAT(result.err, HasSubstr("no answer to rocenet.v1.Health/GetNodeHealth on socket "));
  EXPECT_THAT(result.err, HasSubstr("within 200ms"));
}

TEST_F(DispatchTest, RelativeSocketPath) {
  StartDaemon();
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir_.path().c_str()), 0);
  const Result result = Rocectl({"--socket", "rocenetd.sock", "ports"});
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

nlohmann::json Canonical(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.Scalar()] = Canonical(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(Canonical(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      return node.Scalar();
    default:
      return nullptr;
  }
}

// Every command that prints an API message prints it as YAML too.
TEST_F(DispatchTest, YamlWhereverJson) {
  StartDaemon();
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"ports"},
                                             {"ports", "get", "so1"},
                                             {"neighbors"},
                                             {"neighbors", "so1"},
                                             {"addressing"},
                                             {"addressing", "so1"},
                                             {"health"},
                                             {"health", "so1"},
                                             {"attachments"},
                                             {"reconcile"},
                                             {"topology"}}) {
    const std::string name = absl::StrJoin(words, " ");
    std::vector<std::string> args = {"--socket", socket_, "-o", "yaml"};
    args.insert(args.end(), words.begin(), words.end());
    const Result yaml = Rocectl(args);
    ASSERT_EQ(yaml.exit_code, 0) << name << ": " << yaml.err;
    args[3] = "json";
    const Result json = Rocectl(args);
    ASSERT_EQ(json.exit_code, 0) << name << ": " << json.err;
    // The same document: YAML is a superset of JSON, so both load alike.
    EXPECT_EQ(Canonical(YAML::Load(yaml.out)), Canonical(YAML::Load(json.out))) << name;
    EXPECT_NE(yaml.out.front(), '{') << name;
  }
}

}  // namespace
}  // namespace rocenet::rocectl
