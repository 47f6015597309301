// SPDX-License-Identifier: Apache-2.0
// The applied-state store on an in-memory file system: what survives a
// restart, and what is written when.
#include "daemon/addressing/applied_store.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kPath[] = "/var/lib/rocenet/addressing.json";

AppliedConfig Config(const std::string& port_id = "0000:19:00.0-p8",
                     const char* local = "10.200.1.1/30", const char* peer = "10.200.1.2") {
  AppliedConfig config;
  config.port_id = port_id;
  config.ifname = "so0";
  config.local = P(local);
  config.peer = A(peer);
  config.routes = {Route{P("10.200.0.0/16"), A(peer)}, Route{P("10.50.0.0/16"), std::nullopt}};
  config.mtu = 9000;
  config.gateway_mac = MacAddress({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});
  config.description = std::string("no-alert ") + peer + "/30";
  return config;
}

class AppliedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.AddDirectory("/var/lib/rocenet"); }

  // What a restarted daemon would find.
  absl::StatusOr<std::map<std::string, AppliedConfig>> Reload() {
    AppliedStore fresh(&fs_, kPath);
    if (absl::Status s = fresh.Load(); !s.ok()) return s;
    return fresh.all();
  }

  FakeFileSystem fs_;
  AppliedStore store_{&fs_, kPath};
};

TEST_F(AppliedStoreTest, AMissingFileIsAnEmptyStore) {
  ASSERT_OK(store_.Load());
  EXPECT_THAT(store_.all(), IsEmpty());
  EXPECT_EQ(store_.Get("0000:19:00.0-p8"), std::nullopt);
  EXPECT_EQ(fs_.write_count(), 0);
}

TEST_F(AppliedStoreTest, ACorruptFileIsDataLossNamingThePath) {
  const char* const kCorrupt[] = {
      R"({"version": 1, "ports": [)",                     // cut short
      "",                                                 // empty
      R"({"version": 2, "ports": []})",                   // from the future
      R"({"version": 1})",                                // no ports
      R"({"version": 1, "ports": [{"ifname": "so0"}]})",  // no port id
      R"({"version": 1, "ports": [{"port_id": "p", "ifname": "so0",
          "local": "10.200.1.300/30"}]})",                // bad address
      R"({"version": 1, "ports": [{"port_id": "p", "ifname": "so0", "mtu": "9000"}]})",
      R"({"version": 1, "ports": [{"port_id": "p", "ifname": "so0",
          "description_hex": "ff0"}]})",  // odd hex
  };
  for (const char* content : kCorrupt) {
    SCOPED_TRACE(content);
    fs_.AddFile(kPath, content);
    AppliedStore store(&fs_, kPath);
    absl::Status loaded = store.Load();
    EXPECT_EQ(loaded.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(loaded.message(), HasSubstr(kPath));
    EXPECT_THAT(store.all(), IsEmpty());
  }
}

TEST_F(AppliedStoreTest, WhatIsPutAndFlushedSurvivesARestart) {
  ASSERT_OK(store_.Load());
  AppliedConfig l2;
  l2.port_id = "0000:19:00.0-p22";
  l2.ifname = "so1";
  store_.Put(Config());
  store_.Put(l2);
  EXPECT_EQ(store_.Get("0000:19:00.0-p8"), Config());
  ASSERT_OK(store_.Flush());

  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  ASSERT_EQ(reloaded->size(), 2u);
  EXPECT_EQ(reloaded->at("0000:19:00.0-p8"), Config());
  EXPECT_EQ(reloaded->at("0000:19:00.0-p22"), l2);
  // Only root reads it.
  EXPECT_EQ(fs_.GetFile(kPath)->mode, 0600u);
}

TEST_F(AppliedStoreTest, PutAloneWritesNothingAndFlushWritesEverythingOnce) {
  store_.Put(Config("a"));
  store_.Put(Config("b", "10.200.2.1/30", "10.200.2.2"));
  EXPECT_EQ(fs_.write_count(), 0);
  ASSERT_OK(store_.Flush());
  EXPECT_EQ(fs_.WriteCount(kPath), 1);
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->size(), 2u);
}

TEST_F(AppliedStoreTest, NonUtf8DescriptionBytesSurviveARestart) {
  AppliedConfig config = Config();
  config.description = std::string("no-alert \xff\xfe\x80 10.200.1.2/30\0x", 27);
  store_.Put(config);
  ASSERT_OK(store_.Flush());

  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->at(config.port_id).description, config.description);
  EXPECT_EQ(reloaded->at(config.port_id), config);
  // The file is still JSON that other tools can read.
  auto parsed = ParseApplied(fs_.GetFile(kPath)->content);
  ASSERT_OK(parsed);
}

TEST_F(AppliedStoreTest, AValidUtf8DescriptionIsStoredAsText) {
  AppliedConfig config = Config();
  config.description = "no-alert \xc3\xa9t\xc3\xa9 10.200.1.2/30";  // "été"
  store_.Put(config);
  ASSERT_OK(store_.Flush());
  EXPECT_THAT(fs_.GetFile(kPath)->content, HasSubstr(config.description));
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->at(config.port_id).description, config.description);
}

TEST_F(AppliedStoreTest, FlushWritesOnlyWhenSomethingChanged) {
  ASSERT_OK(store_.Flush());
  EXPECT_EQ(fs_.write_count(), 0);  // nothing ever put

  store_.Put(Config());
  ASSERT_OK(store_.Flush());
  store_.Put(Config());
  ASSERT_OK(store_.Flush());
  ASSERT_OK(store_.Flush());
  EXPECT_EQ(fs_.WriteCount(kPath), 1);

  store_.Put(Config("0000:19:00.0-p8", "10.200.1.5/30", "10.200.1.6"));
  ASSERT_OK(store_.Flush());
  EXPECT_EQ(fs_.WriteCount(kPath), 2);
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->at("0000:19:00.0-p8").local, P("10.200.1.5/30"));
}

TEST_F(AppliedStoreTest, ARestartedStoreRewritesNothingItAlreadyHolds) {
  AppliedConfig odd = Config("0000:19:00.0-p22");
  odd.description = "\xff no-alert 10.200.1.2/30";
  store_.Put(Config());
  store_.Put(odd);
  ASSERT_OK(store_.Flush());
  const int writes = fs_.write_count();

  AppliedStore restarted(&fs_, kPath);
  ASSERT_OK(restarted.Load());
  restarted.Put(Config());
  restarted.Put(odd);
  ASSERT_OK(restarted.Flush());
  EXPECT_EQ(fs_.write_count(), writes);
}

TEST_F(AppliedStoreTest, AFailedFlushIsReportedAndRetriedByTheNextFlush) {
  store_.Put(Config());
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  absl::Status flushed = store_.Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(flushed.message(), HasSubstr("No space left on device"));
  EXPECT_EQ(fs_.GetFile(kPath), std::nullopt);

  // Putting the same config again changes nothing in memory, but it is still
  // not on disk: the next flush writes it.
  store_.Put(Config());
  ASSERT_OK(store_.Flush());
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->at("0000:19:00.0-p8"), Config());
}

TEST_F(AppliedStoreTest, AFailedFlushLeavesTheOldFile) {
  store_.Put(Config());
  ASSERT_OK(store_.Flush());
  store_.Put(Config("0000:19:00.0-p8", "10.200.1.5/30", "10.200.1.6"));
  fs_.FailNextWrite(absl::PermissionDeniedError("rename: Read-only file system"));
  EXPECT_EQ(store_.Flush().code(), absl::StatusCode::kPermissionDenied);
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_EQ(reloaded->at("0000:19:00.0-p8"), Config());
  // In memory it is the new one: that is what the kernel has.
  EXPECT_EQ(store_.Get("0000:19:00.0-p8")->local, P("10.200.1.5/30"));
}

TEST_F(AppliedStoreTest, EraseForgetsAPortAndPersists) {
  store_.Put(Config("a"));
  store_.Put(Config("b", "10.200.2.1/30", "10.200.2.2"));
  ASSERT_OK(store_.Flush());
  store_.Erase("a");
  EXPECT_EQ(store_.Get("a"), std::nullopt);
  ASSERT_OK(store_.Flush());
  auto reloaded = Reload();
  ASSERT_OK(reloaded);
  EXPECT_FALSE(reloaded->contains("a"));
  EXPECT_TRUE(reloaded->contains("b"));

  const int writes = fs_.write_count();
  store_.Erase("never-there");
  ASSERT_OK(store_.Flush());
  EXPECT_EQ(fs_.write_count(), writes);
}

TEST_F(AppliedStoreTest, FlushNeedsTheStateDirectory) {
  FakeFileSystem bare;
  AppliedStore store(&bare, kPath);
  store.Put(Config());
  EXPECT_EQ(store.Flush().code(), absl::StatusCode::kNotFound);
}

TEST_F(AppliedStoreTest, LoadReadsWhatAnEarlierDaemonWrote) {
  fs_.AddFile(kPath, R"({
  "version": 1,
  "ports": [
    {"port_id": "0000:19:00.0-p8", "ifname": "so0", "mtu": 9000,
     "local": "10.200.1.1/30", "peer": "10.200.1.2",
     "routes": [{"destination": "10.200.0.0/16", "gateway": "10.200.1.2"}],
     "gateway_mac": "5a:f1:fc:88:2c:c7", "description": "no-alert 10.200.1.2/30"},
    {"port_id": "0000:19:00.0-p22", "ifname": "so1"}
  ]
})");
  ASSERT_OK(store_.Load());
  std::optional<AppliedConfig> so0 = store_.Get("0000:19:00.0-p8");
  ASSERT_TRUE(so0.has_value());
  EXPECT_EQ(so0->local, P("10.200.1.1/30"));
  EXPECT_EQ(so0->peer, A("10.200.1.2"));
  ASSERT_EQ(so0->routes.size(), 1u);
  EXPECT_EQ(so0->routes[0], (Route{P("10.200.0.0/16"), A("10.200.1.2")}));
  EXPECT_EQ(so0->mtu, 9000u);
  EXPECT_EQ(so0->gateway_mac.ToString(), "5a:f1:fc:88:2c:c7");
  std::optional<AppliedConfig> so1 = store_.Get("0000:19:00.0-p22");
  ASSERT_TRUE(so1.has_value());
  EXPECT_EQ(so1->local, std::nullopt);
  EXPECT_EQ(so1->mtu, 0u);
  EXPECT_TRUE(so1->gateway_mac.IsZero());
  EXPECT_EQ(fs_.write_count(), 0);
}

}  // namespace
}  // namespace rocenet::addressing
