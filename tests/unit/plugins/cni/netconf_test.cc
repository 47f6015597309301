// SPDX-License-Identifier: Apache-2.0
// Good configurations: what ParseNetConf() makes of them, defaults, the
// deviceID precedence, and the keys each verb ignores.
#include "plugins/cni/netconf.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/cni/errors.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::cni {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

TEST(NetConfTest, DefaultsWhenOnlyTheRequiredKeysAreSet) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(
      Command::kAdd, R"({"cniVersion": "1.1.0", "name": "gaudi-net", "type": "rocenet"})");
  ASSERT_OK(conf);
  EXPECT_EQ(conf->cni_version, "1.1.0");
  EXPECT_EQ(conf->name, "gaudi-net");
  EXPECT_EQ(conf->type, "rocenet");
  EXPECT_EQ(conf->socket, "/run/rocenet/rocenetd.sock");
  EXPECT_EQ(conf->timeout, absl::Seconds(10));
  EXPECT_EQ(conf->mtu, 0u);
  EXPECT_EQ(conf->mode, "");
  EXPECT_EQ(conf->device_id, "");
  EXPECT_FALSE(conf->any_free_port);
  EXPECT_FALSE(conf->prev_result.has_value());
}

TEST(NetConfTest, EveryKeyRocenetReads) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kAdd, R"({
      "cniVersion": "0.4.0", "name": "gaudi-net", "type": "rocenet",
      "socket": "/var/run/rocenet/r.sock", "timeout": "1500ms", "mode": "L2", "mtu": 8000,
      "deviceID": "0000:19:00.0-p8", "anyFreePort": true,
      "prevResult": {"cniVersion": "0.4.0", "interfaces": [{"name": "eth0"}], "ips": []}})");
  ASSERT_OK(conf);
  EXPECT_EQ(conf->socket, "/var/run/rocenet/r.sock");
  EXPECT_EQ(conf->timeout, absl::Milliseconds(1500));
  EXPECT_EQ(conf->mode, "L2");
  EXPECT_EQ(conf->mtu, 8000u);
  EXPECT_EQ(conf->device_id, "0000:19:00.0-p8");
  EXPECT_TRUE(conf->any_free_port);
  ASSERT_TRUE(conf->prev_result.has_value());
  EXPECT_EQ((*conf->prev_result)["interfaces"][0]["name"], "eth0");
}

TEST(NetConfTest, RuntimeConfigDeviceIdWinsOverTheTopLevelOne) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kAdd, R"({
      "cniVersion": "1.0.0", "name": "n", "type": "rocenet", "deviceID": "top",
      "runtimeConfig": {"deviceID": "0000:29:00.0-p22"}})");
  ASSERT_OK(conf);
  EXPECT_EQ(conf->device_id, "0000:29:00.0-p22");
}

TEST(NetConfTest, TopLevelDeviceIdWhenRuntimeConfigHasNone) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kAdd, R"({
      "cniVersion": "1.0.0", "name": "n", "type": "rocenet", "deviceID": "0000:19:00.0-p8",
      "runtimeConfig": {"ips": ["10.0.0.1/24"]}})");
  ASSERT_OK(conf);
  EXPECT_EQ(conf->device_id, "0000:19:00.0-p8");
}

TEST(NetConfTest, UnknownKeysAndNullsAreIgnored) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kAdd, R"({
      "cniVersion": "1.0.0", "name": "n", "type": "rocenet", "capabilities": {"deviceID": true},
      "args": {"cni": {"labels": []}}, "ipam": {}, "mtu": null, "deviceID": null})");
  ASSERT_OK(conf);
  EXPECT_EQ(conf->mtu, 0u);
  EXPECT_EQ(conf->device_id, "");
}

TEST(NetConfTest, DelIgnoresTheKeysOnlyAddUses) {
  // A configuration edited after ADD must not keep the pod from going away.
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kDel, R"({
      "cniVersion": "1.0.0", "name": "n", "type": "rocenet", "mtu": "big", "mode": "L4",
      "routes": [], "deviceID": 3, "prevResult": 7})");
  EXPECT_OK(conf);
}

TEST(NetConfTest, DelStillNeedsAUsableSocketAndTimeout) {
  EXPECT_EQ(CniCodeOf(ParseNetConf(Command::kDel, R"({"cniVersion": "1.0.0", "name": "n",
                "type": "rocenet", "timeout": "soon"})")
                          .status()),
            CniCode::kInvalidNetworkConfig);
}

TEST(NetConfTest, DeeplyNestedValuesAreRefusedNotPrinted) {
  // "mtu" holding 100000 nested arrays once overflowed the stack while the
  // error message printed the value.
  const std::string deep(100000, '[');
  const std::string config =
      absl::StrCat(R"({"cniVersion": "1.0.0", "name": "n", "type": "rocenet", "mtu": )", deep,
                   std::string(deep.size(), ']'), "}");
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kAdd, config);
  EXPECT_EQ(CniCodeOf(conf.status()), CniCode::kDecodingFailure) << conf.status();
  // 64 levels are still fine (and the mtu is then refused as not a number).
  const std::string ok =
      absl::StrCat(R"({"cniVersion": "1.0.0", "name": "n", "type": "rocenet", "mtu": )",
                   std::string(62, '['), std::string(62, ']'), "}");
  EXPECT_EQ(CniCodeOf(ParseNetConf(Command::kAdd, ok).status()), CniCode::kInvalidNetworkConfig);
}

TEST(NetConfTest, ANumberTooLargeForADoubleIsInvalidJson) {
  // nlohmann reports it as out_of_range, not parse_error; it used to escape.
  const absl::StatusOr<NetConf> conf = ParseNetConf(
      Command::kAdd, R"({"cniVersion": "1.0.0", "name": "n", "type": "rocenet", "mtu": 1e400})");
  EXPECT_EQ(CniCodeOf(conf.status()), CniCode::kDecodingFailure) << conf.status();
  EXPECT_THAT(std::string(conf.status().message()), ::testing::HasSubstr("1e400"));
}

TEST(NetConfTest, GcTakesTheValidAttachments) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kGc, R"({
      "cniVersion": "1.1.0", "name": "n", "type": "rocenet",
      "cni.dev/valid-attachments": [{"containerID": "c1", "ifname": "net1"},
                                    {"containerID": "c2"}]})");
  ASSERT_OK(conf);
  EXPECT_THAT(
      conf->valid_attachments,
      ElementsAre(
          AllOf(Field(&GcAttachment::container_id, "c1"), Field(&GcAttachment::ifname, "net1")),
          AllOf(Field(&GcAttachment::container_id, "c2"), Field(&GcAttachment::ifname, ""))));
}

TEST(NetConfTest, GcAcceptsTheDraftKeyLibcniAlsoSends) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kGc, R"({
      "cniVersion": "1.1.0", "name": "n", "type": "rocenet",
      "cni.dev/attachments": [{"containerID": "c1", "ifname": "net1"}]})");
  ASSERT_OK(conf);
  ASSERT_EQ(conf->valid_attachments.size(), 1u);
  EXPECT_EQ(conf->valid_attachments[0].container_id, "c1");
}

TEST(NetConfTest, GcWithAnEmptyListKeepsNothing) {
  const absl::StatusOr<NetConf> conf = ParseNetConf(Command::kGc, R"({
      "cniVersion": "1.1.0", "name": "n", "type": "rocenet", "cni.dev/valid-attachments": []})");
  ASSERT_OK(conf);
  EXPECT_THAT(conf->valid_attachments, IsEmpty());
}

TEST(NetConfTest, StatusNeedsNoMore) {
  EXPECT_TRUE(
      ParseNetConf(Command::kStatus, R"({"cniVersion": "1.1.0", "name": "n", "type": "rocenet"})")
          .ok());
}

TEST(ReplyVersionTest, EchoesSupportedVersions) {
  for (const absl::string_view version : kSupportedVersions) {
    EXPECT_EQ(ReplyVersion(absl::StrCat(R"({"cniVersion": ")", version, R"("})")), version);
  }
}

TEST(ReplyVersionTest, LatestForAnythingElse) {
  EXPECT_EQ(ReplyVersion(R"({"cniVersion": "0.3.1"})"), "1.1.0");
  EXPECT_EQ(ReplyVersion(R"({"cniVersion": 1})"), "1.1.0");
  EXPECT_EQ(ReplyVersion("not json"), "1.1.0");
  EXPECT_EQ(ReplyVersion(""), "1.1.0");
}

}  // namespace
}  // namespace rocenet::cni
