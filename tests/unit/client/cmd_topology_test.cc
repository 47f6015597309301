// SPDX-License-Identifier: Apache-2.0
// rocectl topology, attachments and reservations against a fake rocenetd.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/client/fake_rocenetd.h"
#include "tests/unit/client/test_support.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

using ::rocenet::rocectl::testutil::CliResult;
using ::rocenet::rocectl::testutil::FakeData;
using ::rocenet::rocectl::testutil::FakeRocenetd;
using ::rocenet::rocectl::testutil::RunCli;
using ::rocenet::rocectl::testutil::SampleNode;
using ::rocenet::rocectl::testutil::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

class TopologyCommandTest : public ::testing::Test {
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

TEST_F(TopologyCommandTest, TableJoinsPortsNeighborsAndPlans) {
  StartDaemon();
  const CliResult result = RunCli({"--socket", socket_, "topology"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith("node: "));
  EXPECT_THAT(result.out, HasSubstr("10.200.1.1/30   leaf1    Ethernet1/1   10.200.1.2\n"));
  EXPECT_THAT(result.out, HasSubstr("leaf1    02:5e:00:ff:00:01   10.0.0.1       so1\n"));
  EXPECT_THAT(result.out, HasSubstr("1      so1     leaf1\n"));
}

TEST_F(TopologyCommandTest, FormatsAndOutputFlag) {
  StartDaemon();
  CliResult result = RunCli({"--socket", socket_, "topology", "--format", "dot"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith("digraph rocenet_topology {"));
  EXPECT_THAT(result.out, HasSubstr("switch leaf1"));

  result = RunCli({"--socket", socket_, "topology", "--format=json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["switches"][0]["system_name"], "leaf1");

  // -o picks json or yaml when --format is not given.
  result = RunCli({"--socket", socket_, "-o", "yaml", "topology"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(YAML::Load(result.out)["ports"][1]["name"].as<std::string>(), "so2");
}

TEST_F(TopologyCommandTest, DotRendersWithGraphviz) {
  if (access("/usr/bin/dot", X_OK) != 0) GTEST_SKIP() << "graphviz (dot) is not installed";
  StartDaemon();
  const CliResult result = RunCli({"--socket", socket_, "topology", "--format", "dot"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string dot_path = dir_.Join("topology.dot");
  const std::string png_path = dir_.Join("topology.png");
  std::ofstream(dot_path) << result.out;
  const std::string command =
      absl::StrCat("/usr/bin/dot -Tpng -o ", png_path, " ", dot_path, " 2>&1");
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream png(png_path, std::ios::binary);
  char magic[8] = {};
  png.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

TEST_F(TopologyCommandTest, BadFormatIsAUsageErrorBeforeAnyCall) {
  const CliResult result = RunCli({"--socket", socket_, "topology", "--format", "svg"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("flag --format: unknown topology format \"svg\""));
}

TEST_F(TopologyCommandTest, AttachmentsTableAndJson) {
  v1::Attachment* a = data_.attachments.add_attachments();
  a->set_host_ifname("so1");
  a->set_ifname("net1");
  a->set_state("attached");
  a->mutable_pod()->set_namespace_("ml");
  a->mutable_pod()->set_name("trainer-0");
  a->add_ips()->set_address("10.200.1.1/30");
  StartDaemon();
  CliResult result = RunCli({"--socket", socket_, "attachments"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("ml/trainer-0   so1    net1     10.200.1.1/30   attached"));
  result = RunCli({"--socket", socket_, "attachments", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["attachments"][0]["pod"]["name"], "trainer-0");
  result = RunCli({"--socket", socket_, "attachments", "-o", "yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(YAML::Load(result.out)["attachments"][0]["ifname"].as<std::string>(), "net1");
  result = RunCli({"--socket", socket_, "attachments", "so1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.out, IsEmpty());
}

TEST_F(TopologyCommandTest, ReservationsTableAndJson) {
  v1::Reservation* r = data_.reservations.add_reservations();
  r->set_owner_uid("8c1d2e3f");
  r->set_owner("ml/rdma-claim");
  r->add_pod_uids("6a1f0c2e");
  r->add_port_ids("0000:19:00.0-p8");
  StartDaemon();
  CliResult result = RunCli({"--socket", socket_, "reservations"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, StartsWith("OWNER           OWNER UID   PODS       PORTS"));
  EXPECT_THAT(result.out, HasSubstr("ml/rdma-claim   8c1d2e3f    6a1f0c2e   0000:19:00.0-p8"));
  result = RunCli({"--socket", socket_, "reservations", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["reservations"][0]["port_ids"][0], "0000:19:00.0-p8");
  result = RunCli({"--socket", socket_, "reservations", "x"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.out, IsEmpty());
}

TEST_F(TopologyCommandTest, NoReservations) {
  StartDaemon();
  const CliResult result = RunCli({"--socket", socket_, "reservations"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "No ports are reserved.\n");
}

}  // namespace
}  // namespace rocenet::rocectl
