// SPDX-License-Identifier: Apache-2.0
// The plugin end to end, in process: Dispatch() with the real gRPC client
// against a fake rocenetd on a unix socket in a temporary directory, every
// verb in every supported version. An unreachable daemon:
// dispatch_unreachable_test.cc.
#include "plugins/cni/dispatch.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/cni/daemon_client.h"
#include "tests/unit/plugins/cni/dispatch_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::cni {
namespace {

using Json = nlohmann::ordered_json;
using ::rocenet::cni::testutil::CniDispatchTest;
using ::rocenet::cni::testutil::FakeAttachments;
using ::rocenet::cni::testutil::kContainer;
using ::rocenet::cni::testutil::kNetns;
using ::rocenet::cni::testutil::PluginRun;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class CniVersionedDispatchTest : public CniDispatchTest,
                                 public ::testing::WithParamInterface<const char*> {};

TEST_P(CniVersionedDispatchTest, VersionEchoesTheRequest) {
  const PluginRun run =
      Run({{"CNI_COMMAND", "VERSION"}}, absl::StrCat(R"({"cniVersion": ")", GetParam(), R"("})"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out, absl::StrCat(R"({"cniVersion":")", GetParam(),
                                  R"(","supportedVersions":["0.4.0","1.0.0","1.1.0"]})", "\n"));
}

TEST_P(CniVersionedDispatchTest, AddCheckDelDel) {
  StartDaemon();
  const std::string conf = Conf(GetParam(), R"("runtimeConfig": {"deviceID": "0000:19:00.0-p22"})");

  const PluginRun add = Run(Env("ADD"), conf);
  ASSERT_EQ(add.exit_code, 0) << add.out;
  const Json result = add.Json();
  EXPECT_EQ(result["cniVersion"], GetParam());
  EXPECT_EQ(result["interfaces"][0]["name"], "net1");
  EXPECT_EQ(result["interfaces"][0]["mac"], "b0:fd:0b:00:00:01");
  EXPECT_EQ(result["interfaces"][0]["sandbox"], kNetns);
  EXPECT_EQ(result["ips"][0]["address"], "10.200.2.1/30");
  EXPECT_EQ(result["ips"][0]["gateway"], "10.200.2.2");
  EXPECT_EQ(result["ips"][0]["interface"], 0);
  EXPECT_EQ(result["routes"][0]["dst"], "10.200.0.0/16");
  EXPECT_EQ(result["ips"][0].contains("version"), std::string(GetParam()) == "0.4.0");
  EXPECT_EQ(result["interfaces"][0].contains("pciID"), std::string(GetParam()) == "1.1.0");

  const std::optional<v1::AttachRequest> sent = daemon_->last_attach();
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->container_id(), kContainer);
  EXPECT_EQ(sent->netns(), kNetns);
  EXPECT_EQ(sent->ifname(), "net1");
  EXPECT_EQ(sent->device_id(), "0000:19:00.0-p22");
  EXPECT_FALSE(sent->any_free_port());
  EXPECT_EQ(sent->cni_version(), GetParam());
  EXPECT_EQ(sent->pod().namespace_(), "ai");
  EXPECT_EQ(sent->pod().name(), "trainer-0");
  EXPECT_EQ(sent->pod().uid(), "7c0e6f1e");

  const PluginRun check = Run(Env("CHECK"), WithPrevResult(conf, result));
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_THAT(check.out, IsEmpty());

  const PluginRun del = Run(Env("DEL"), WithPrevResult(conf, result));
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_THAT(del.out, IsEmpty());
  EXPECT_THAT(daemon_->attachments(), IsEmpty());

  const PluginRun again = Run(Env("DEL"), conf);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(again.out, IsEmpty());
  EXPECT_EQ(daemon_->calls("Detach"), 2);
}

TEST_P(CniVersionedDispatchTest, AddChainsOntoPrevResult) {
  StartDaemon();
  const Json prev =
      Json::parse(R"({"interfaces": [{"name": "eth0", "sandbox": "/var/run/netns/pod1"}],
      "ips": [{"address": "10.1.0.5/24", "interface": 0}], "dns": {"nameservers": ["10.1.0.1"]}})");
  const PluginRun add = Run(Env("ADD"), WithPrevResult(Conf(GetParam()), prev));
  ASSERT_EQ(add.exit_code, 0) << add.out;
  const Json result = add.Json();
  ASSERT_EQ(result["interfaces"].size(), 2u);
  EXPECT_EQ(result["interfaces"][0]["name"], "eth0");
  EXPECT_EQ(result["interfaces"][1]["name"], "net1");
  ASSERT_EQ(result["ips"].size(), 2u);
  EXPECT_EQ(result["ips"][1]["address"], "10.200.1.1/30");
  EXPECT_EQ(result["ips"][1]["interface"], 1);
  EXPECT_EQ(result["dns"]["nameservers"][0], "10.1.0.1");

  const PluginRun check = Run(Env("CHECK"), WithPrevResult(Conf(GetParam()), result));
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

TEST_P(CniVersionedDispatchTest, CheckFailsWhenPrevResultDisagrees) {
  StartDaemon();
  const PluginRun add = Run(Env("ADD"), Conf(GetParam()));
  ASSERT_EQ(add.exit_code, 0) << add.out;
  Json result = add.Json();
  result["ips"][0]["address"] = "10.200.7.1/30";
  const PluginRun check = Run(Env("CHECK"), WithPrevResult(Conf(GetParam()), result));
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_EQ(check.Json()["code"], 999);
  EXPECT_THAT(check.Json()["msg"].get<std::string>(),
              HasSubstr("address 10.200.1.1/30 is missing from prevResult"));
}

TEST_P(CniVersionedDispatchTest, DelOfSomethingNeverAddedSucceeds) {
  StartDaemon();
  const PluginRun del = Run(Env("DEL", "net7", "c0ffee"), Conf(GetParam()));
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_THAT(del.out, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Versions, CniVersionedDispatchTest,
                         ::testing::Values("0.4.0", "1.0.0", "1.1.0"));

TEST_F(CniDispatchTest, VersionWithoutStdinAnswersTheLatest) {
  const PluginRun run = Run({{"CNI_COMMAND", "VERSION"}}, "");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.Json()["cniVersion"], "1.1.0");
}

TEST_F(CniDispatchTest, AddPassesModeAndMtu) {
  StartDaemon();
  const PluginRun add = Run(Env("ADD"), Conf("1.1.0", R"("mode": "L2", "mtu": 4000)"));
  ASSERT_EQ(add.exit_code, 0) << add.out;
  EXPECT_EQ(daemon_->last_attach()->mode(), "L2");
  EXPECT_EQ(daemon_->last_attach()->mtu(), 4000u);
  const Json result = add.Json();
  EXPECT_EQ(result["interfaces"][0]["mtu"], 4000);
  EXPECT_FALSE(result.contains("ips"));
  EXPECT_FALSE(result.contains("routes"));
}

TEST_F(CniDispatchTest, AddWithAnUnknownDeviceIdIsAConfigError) {
  StartDaemon();
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0", R"("deviceID": "0000:99:00.0-p1")"));
  EXPECT_EQ(add.exit_code, 1);
  EXPECT_EQ(add.Json()["code"], 7);
  EXPECT_EQ(add.Json()["msg"], "deviceID 0000:99:00.0-p1: no such port");
}

TEST_F(CniDispatchTest, AddOfABusyPortIsTryAgainLater) {
  StartDaemon();
  const std::string conf = Conf("1.0.0", R"("deviceID": "0000:19:00.0-p8")");
  ASSERT_EQ(Run(Env("ADD", "net1", "pod-a"), conf).exit_code, 0);
  const PluginRun second = Run(Env("ADD", "net1", "pod-b"), conf);
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.Json()["code"], 11);
  EXPECT_EQ(second.Json()["msg"], "port 0000:19:00.0-p8: attached to another pod");
}

TEST_F(CniDispatchTest, AddWithNoFreePortIsTryAgainLater) {
  StartDaemon();
  ASSERT_EQ(Run(Env("ADD", "net1"), Conf("1.0.0")).exit_code, 0);
  ASSERT_EQ(Run(Env("ADD", "net2"), Conf("1.0.0")).exit_code, 0);
  const PluginRun third = Run(Env("ADD", "net3"), Conf("1.0.0"));
  EXPECT_EQ(third.Json()["code"], 11);
  EXPECT_EQ(third.Json()["msg"], "no free scale-out port");
}

TEST_F(CniDispatchTest, DaemonInvalidArgumentAboutTheNetnsIsCode4) {
  StartDaemon();
  daemon_->FailWith("Attach", grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                           "netns /var/run/netns/pod1: not a network namespace"));
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0"));
  EXPECT_EQ(add.Json()["code"], 4);
  EXPECT_EQ(add.Json()["msg"], "netns /var/run/netns/pod1: not a network namespace");
}

TEST_F(CniDispatchTest, DaemonInvalidArgumentAboutTheMtuIsCode7) {
  StartDaemon();
  daemon_->FailWith("Attach", grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                           "mtu 9500: above port so0's maximum 9000"));
  EXPECT_EQ(Run(Env("ADD"), Conf("1.0.0", R"("mtu": 9500)")).Json()["code"], 7);
}

TEST_F(CniDispatchTest, DelWhenTheDaemonSaysNotFoundSucceeds) {
  StartDaemon();
  daemon_->FailWith("Detach", grpc::Status(grpc::StatusCode::NOT_FOUND, "no attachment"));
  EXPECT_EQ(Run(Env("DEL"), Conf("1.0.0")).exit_code, 0);
}

TEST_F(CniDispatchTest, DelIgnoresKeysOnlyAddUses) {
  StartDaemon();
  const PluginRun del = Run(Env("DEL"), Conf("1.0.0", R"("mtu": "jumbo", "mode": "L4")"));
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_EQ(daemon_->calls("Detach"), 1);
}

TEST_F(CniDispatchTest, CheckOfAnUnknownAttachmentFails) {
  StartDaemon();
  const PluginRun check =
      Run(Env("CHECK"), WithPrevResult(Conf("1.1.0"), Json::parse(R"({"interfaces": []})")));
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_EQ(check.Json()["code"], 999);
  EXPECT_EQ(check.Json()["msg"], absl::StrCat("no attachment ", kContainer, "/net1"));
}

TEST_F(CniDispatchTest, CheckPassesOnTheDaemonsVerdict) {
  StartDaemon();
  daemon_->FailWith("Check", grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                          "net1: address 10.200.1.1/30 missing in the pod"));
  const PluginRun check =
      Run(Env("CHECK"), WithPrevResult(Conf("1.0.0"), Json::parse(R"({"interfaces": []})")));
  EXPECT_EQ(check.Json()["code"], 999);
  EXPECT_EQ(check.Json()["msg"], "net1: address 10.200.1.1/30 missing in the pod");
}

TEST_F(CniDispatchTest, GcKeepsTheValidContainersAndReleasesTheRest) {
  StartDaemon();
  ASSERT_EQ(Run(Env("ADD", "net1", "keep"), Conf("1.1.0")).exit_code, 0);
  ASSERT_EQ(Run(Env("ADD", "net1", "stale"), Conf("1.1.0")).exit_code, 0);
  const PluginRun gc = Run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", "/opt/cni/bin"}},
                           Conf("1.1.0", R"("cni.dev/valid-attachments": [
                               {"containerID": "keep", "ifname": "net1"},
                               {"containerID": "keep", "ifname": "net2"},
                               {"containerID": "other", "ifname": "eth0"}])"));
  ASSERT_EQ(gc.exit_code, 0) << gc.out;
  EXPECT_THAT(gc.out, IsEmpty());
  ASSERT_TRUE(daemon_->last_gc().has_value());
  EXPECT_THAT(daemon_->last_gc()->valid_container_ids(), ::testing::ElementsAre("keep", "other"));
  EXPECT_EQ(daemon_->last_gc()->network(), "gaudi-net");
  ASSERT_EQ(daemon_->attachments().size(), 1u);
  EXPECT_EQ(daemon_->attachments()[0].container_id(), "keep");
}

TEST_F(CniDispatchTest, GcOfOneNetworkLeavesAnotherNetworksAttachments) {
  StartDaemon();
  const std::string other = absl::StrReplaceAll(Conf("1.1.0"), {{"gaudi-net", "rail-b"}});
  ASSERT_EQ(Run(Env("ADD", "net1", "pod-a"), Conf("1.1.0")).exit_code, 0);
  ASSERT_EQ(Run(Env("ADD", "net2", "pod-b"), other).exit_code, 0);
  ASSERT_EQ(daemon_->attachments().size(), 2u);

  // The runtime's GC of gaudi-net, which no longer has any pod.
  const PluginRun gc = Run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", "/opt/cni/bin"}},
                           Conf("1.1.0", R"("cni.dev/valid-attachments": [])"));
  ASSERT_EQ(gc.exit_code, 0) << gc.out;
  ASSERT_EQ(daemon_->attachments().size(), 1u);
  EXPECT_EQ(daemon_->attachments()[0].container_id(), "pod-b");
  EXPECT_EQ(daemon_->attachments()[0].network(), "rail-b");
}

TEST_F(CniDispatchTest, StatusIsOkWhenTheDaemonAnswers) {
  StartDaemon();
  const PluginRun status = Run({{"CNI_COMMAND", "STATUS"}}, Conf("1.1.0"));
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_THAT(status.out, IsEmpty());
  EXPECT_EQ(daemon_->calls("List"), 1);
}

TEST_F(CniDispatchTest, TheConnectionKeptOpenOutlivesTheDispatcher) {
  StartDaemon();
  std::unique_ptr<AttachmentsClient> kept;
  const PluginRun status =
      testutil::RunPlugin({{"CNI_COMMAND", "STATUS"}}, Conf("1.1.0"), ConnectKeepingOpen(&kept));
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_EQ(daemon_->calls("List"), 1);
  // Still open and usable after the dispatcher is done with it.
  ASSERT_NE(kept, nullptr);
  EXPECT_OK(kept->List());
  EXPECT_EQ(daemon_->calls("List"), 2);
}

TEST_F(CniDispatchTest, AConnectionThatFailsIsNotKept) {
  std::unique_ptr<AttachmentsClient> kept;
  const PluginRun status =
      testutil::RunPlugin({{"CNI_COMMAND", "STATUS"}}, Conf("1.1.0"), ConnectKeepingOpen(&kept));
  EXPECT_EQ(status.Json()["code"], 50);
  EXPECT_EQ(kept, nullptr);
}

TEST_F(CniDispatchTest, StatusWithoutTheDaemonIsPluginNotAvailable) {
  const PluginRun status = Run({{"CNI_COMMAND", "STATUS"}}, Conf("1.1.0"));
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_EQ(status.Json()["code"], 50);
  EXPECT_THAT(status.Json()["msg"].get<std::string>(), HasSubstr("does not exist"));
}

TEST_F(CniDispatchTest, UnimplementedRpcSaysTheDaemonIsOlder) {
  StartDaemon();
  daemon_->FailWith("Gc", grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""));
  const PluginRun gc =
      Run({{"CNI_COMMAND", "GC"}}, Conf("1.1.0", R"("cni.dev/valid-attachments": [])"));
  EXPECT_EQ(gc.Json()["code"], 999);
  EXPECT_THAT(gc.Json()["msg"].get<std::string>(), HasSubstr("older than the rocenet plugin"));
}

TEST_F(CniDispatchTest, NoCommandExplainsItselfOnStderr) {
  const PluginRun run = Run({}, "");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.Json()["code"], 4);
  EXPECT_THAT(run.err, HasSubstr("CNI plugin of rocenetd"));
}

}  // namespace
}  // namespace rocenet::cni
