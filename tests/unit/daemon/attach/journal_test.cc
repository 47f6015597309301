// SPDX-License-Identifier: Apache-2.0
// The journal on disk: what a restarted rocenetd reads back, and that a
// failed write changes nothing anyone can see.
#include "daemon/attach/journal.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/daemon/attach/printers.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kPath[] = "/var/lib/rocenet/attachments.json";

// Every field set to something other than its default.
AttachmentRecord Full(const std::string& container_id, const std::string& ifname) {
  AttachmentRecord r;
  r.container_id = container_id;
  r.ifname = ifname;
  r.netns = "/var/run/netns/cni-1234";
  r.port_id = "0000:19:00.0-p8";
  r.host_ifname = "so0";
  r.mac = "0c:42:a1:00:00:02";
  r.pci_address = "0000:19:00.0";
  r.state = AttachState::kAttached;
  r.pod = PodIdentity{"training", "worker-0", "6a1f0c2e-5b7d-4e3a-9c8b-1d2e3f4a5b6c"};
  r.cni_version = "1.1.0";
  r.network = "gaudi-net";
  r.created_unix = 1717171717;
  r.mtu = 9000;
  r.local = P("10.200.1.1/30");
  r.peer = A("10.200.1.2");
  r.routes = {addressing::Route{P("10.200.0.0/16"), A("10.200.1.2")},
              addressing::Route{P("10.210.0.0/16"), std::nullopt}};
  r.table = 1002;
  return r;
}

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.AddDirectory("/var/lib/rocenet"); }

  // What a restarted daemon reads.
  std::vector<AttachmentRecord> Reload() {
    Journal again(&fs_, kPath);
    absl::Status loaded = again.Load();
    EXPECT_OK(loaded);
    return again.All();
  }

  FakeFileSystem fs_;
  Journal journal_{&fs_, kPath};
};

TEST_F(JournalTest, EveryFieldSurvivesARestart) {
  const AttachmentRecord full = Full("c1", "net1");
  AttachmentRecord l2 = Full("c2", "net2");
  l2.state = AttachState::kAttaching;
  l2.local.reset();
  l2.peer.reset();
  l2.routes.clear();
  AttachmentRecord leaving = Full("c3", "net1");
  leaving.state = AttachState::kDetaching;
  ASSERT_OK(journal_.Put(full));
  ASSERT_OK(journal_.Put(l2));
  ASSERT_OK(journal_.Put(leaving));

  EXPECT_THAT(Reload(), ElementsAre(full, l2, leaving));
}

TEST_F(JournalTest, TheFileIsPrivateAndSaysWhatIsWhere) {
  ASSERT_OK(journal_.Put(Full("c1", "net1")));
  std::optional<FakeFileSystem::File> file = fs_.GetFile(kPath);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->mode, 0600u);
  const nlohmann::json json = nlohmann::json::parse(file->content);
  EXPECT_EQ(json["version"], 1);
  ASSERT_EQ(json["attachments"].size(), 1u);
  EXPECT_EQ(json["attachments"][0]["state"], "attached");
  EXPECT_EQ(json["attachments"][0]["host_ifname"], "so0");
  EXPECT_EQ(json["attachments"][0]["local"], "10.200.1.1/30");
}

TEST_F(JournalTest, FindAndFindByPort) {
  AttachmentRecord other = Full("c2", "net1");
  other.port_id = "0000:19:00.0-p22";
  ASSERT_OK(journal_.Put(Full("c1", "net1")));
  ASSERT_OK(journal_.Put(other));

  ASSERT_NE(journal_.Find("c2", "net1"), nullptr);
  EXPECT_EQ(journal_.Find("c2", "net1")->port_id, "0000:19:00.0-p22");
  EXPECT_EQ(journal_.Find("c2", "net2"), nullptr);
  EXPECT_EQ(journal_.Find("c3", "net1"), nullptr);
  ASSERT_NE(journal_.FindByPort("0000:19:00.0-p8"), nullptr);
  EXPECT_EQ(journal_.FindByPort("0000:19:00.0-p8")->container_id, "c1");
  EXPECT_EQ(journal_.FindByPort("0000:19:00.0-p23"), nullptr);
}

TEST_F(JournalTest, PutReplacesAndEraseForgets) {
  AttachmentRecord record = Full("c1", "net1");
  record.state = AttachState::kAttaching;
  ASSERT_OK(journal_.Put(record));
  record.state = AttachState::kAttached;
  ASSERT_OK(journal_.Put(record));
  EXPECT_THAT(Reload(), ElementsAre(record));

  ASSERT_OK(journal_.Erase("c1", "net1"));
  EXPECT_EQ(journal_.Find("c1", "net1"), nullptr);
  EXPECT_THAT(Reload(), IsEmpty());
}

TEST_F(JournalTest, ErasingSomethingUnknownWritesNothing) {
  ASSERT_OK(journal_.Put(Full("c1", "net1")));
  const int writes = fs_.write_count();
  EXPECT_OK(journal_.Erase("c1", "net2"));
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_EQ(journal_.All().size(), 1u);
}

TEST_F(JournalTest, AMissingFileIsAnEmptyJournal) {
  ASSERT_OK(journal_.Load());
  EXPECT_THAT(journal_.All(), IsEmpty());
  EXPECT_FALSE(fs_.GetFile(kPath).has_value());
}

TEST_F(JournalTest, ACorruptFileIsDataLossNamingThePath) {
  for (const char* content :
       {"{\"version\": 1, \"attachments\": [", "", "[]", "{\"version\": 2, \"attachments\": []}",
        R"({"version": 1, "attachments": [{"container_id": "c1"}]})",
        R"({"version": 1, "attachments": [{"container_id": "c1", "ifname": "net1",
                                  "netns": "/run/netns/x", "port_id": "p", "host_ifname": "so0",
                                  "state": "moving"}]})",
        R"({"version": 1, "attachments": [{"container_id": "c1", "ifname": "net1",
                                  "netns": "/run/netns/x", "port_id": "p", "host_ifname": "so0",
                                  "state": "attached", "local": "10.200.1.300/30"}]})"}) {
    SCOPED_TRACE(content);
    fs_.AddFile(kPath, content);
    Journal journal(&fs_, kPath);
    const absl::Status status = journal.Load();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(kPath));
    EXPECT_THAT(journal.All(), IsEmpty());
  }
}

TEST_F(JournalTest, AFailedPutChangesNeitherMemoryNorTheFile) {
  const AttachmentRecord first = Full("c1", "net1");
  ASSERT_OK(journal_.Put(first));
  const std::string before = fs_.GetFile(kPath)->content;

  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  AttachmentRecord second = Full("c2", "net1");
  second.port_id = "0000:19:00.0-p22";
  const absl::Status status = journal_.Put(second);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);

  EXPECT_EQ(journal_.Find("c2", "net1"), nullptr);
  EXPECT_EQ(journal_.FindByPort("0000:19:00.0-p22"), nullptr);
  EXPECT_THAT(journal_.All(), ElementsAre(first));
  EXPECT_EQ(fs_.GetFile(kPath)->content, before);
}

TEST_F(JournalTest, AFailedReplaceKeepsTheOldRecord) {
  AttachmentRecord record = Full("c1", "net1");
  record.state = AttachState::kAttaching;
  ASSERT_OK(journal_.Put(record));
  fs_.FailNextWrite(absl::PermissionDeniedError("write: Read-only file system"));
  AttachmentRecord done = record;
  done.state = AttachState::kAttached;
  EXPECT_FALSE(journal_.Put(done).ok());
  EXPECT_EQ(journal_.Find("c1", "net1")->state, AttachState::kAttaching);
  EXPECT_THAT(Reload(), ElementsAre(record));
}

TEST_F(JournalTest, AFailedEraseKeepsTheRecord) {
  const AttachmentRecord record = Full("c1", "net1");
  ASSERT_OK(journal_.Put(record));
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  EXPECT_FALSE(journal_.Erase("c1", "net1").ok());
  ASSERT_NE(journal_.Find("c1", "net1"), nullptr);
  EXPECT_THAT(Reload(), ElementsAre(record));
}

TEST_F(JournalTest, AFailedLoadKeepsWhatWasLoaded) {
  const AttachmentRecord record = Full("c1", "net1");
  ASSERT_OK(journal_.Put(record));
  fs_.AddFile(kPath, "not json");
  EXPECT_EQ(journal_.Load().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(journal_.All(), ElementsAre(record));
}

TEST(AdoptJournalTest, AnOlderDaemonsJournalIsTakenOverOnceAndRemoved) {
  FakeFileSystem fs;
  fs.AddDirectory("/var/lib/rocenet");
  fs.AddDirectory("/run/rocenet");
  fs.AddFile(kPath, "{\"old\": true}", 0600);
  ASSERT_OK(AdoptJournal(fs, kPath, "/run/rocenet/attachments.json"));
  EXPECT_EQ(*fs.ReadFile("/run/rocenet/attachments.json"), "{\"old\": true}");
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile(kPath).status()));
  // Nothing left to take over: nothing changes.
  ASSERT_OK(AdoptJournal(fs, kPath, "/run/rocenet/attachments.json"));
  EXPECT_EQ(*fs.ReadFile("/run/rocenet/attachments.json"), "{\"old\": true}");
}

TEST(AdoptJournalTest, ACurrentJournalWinsAndTheOldOneIsLeftAlone) {
  FakeFileSystem fs;
  fs.AddDirectory("/var/lib/rocenet");
  fs.AddDirectory("/run/rocenet");
  fs.AddFile(kPath, "old", 0600);
  fs.AddFile("/run/rocenet/attachments.json", "new", 0600);
  ASSERT_OK(AdoptJournal(fs, kPath, "/run/rocenet/attachments.json"));
  EXPECT_EQ(*fs.ReadFile("/run/rocenet/attachments.json"), "new");
  EXPECT_EQ(*fs.ReadFile(kPath), "old");
}

TEST(AdoptJournalTest, AFailedWriteKeepsTheOldJournal) {
  FakeFileSystem fs;
  fs.AddDirectory("/var/lib/rocenet");
  fs.AddDirectory("/run/rocenet");
  fs.AddFile(kPath, "old", 0600);
  fs.FailNextWrite(absl::ResourceExhaustedError("disk full"));
  EXPECT_EQ(AdoptJournal(fs, kPath, "/run/rocenet/attachments.json").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(*fs.ReadFile(kPath), "old");
}

}  // namespace
}  // namespace rocenet::attach
