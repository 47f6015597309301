// SPDX-License-Identifier: Apache-2.0
// The reservations on disk: what a restarted rocenetd reads back, what it
// refuses to guess about, and that a failed write changes nothing anyone
// can see.
#include "daemon/attach/reservations.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/daemon/attach/printers.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kPath[] = "/var/lib/rocenet/reservations.json";

Reservation Claim(const std::string& uid, std::vector<std::string> ports,
                  std::vector<std::string> pods = {"pod-a"}) {
  return Reservation{.owner_uid = uid,
                     .owner = "training/" + uid,
                     .pod_uids = std::move(pods),
                     .port_ids = std::move(ports),
                     .created_unix = 1717171717,
                     .hcl = {}};
}

class ReservationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_.AddDirectory("/var/lib/rocenet"); }

  // What a restarted daemon reads.
  std::vector<Reservation> Reload() {
    ReservationStore again(&fs_, kPath);
    absl::Status loaded = again.Load();
    EXPECT_OK(loaded);
    return again.All();
  }

  FakeFileSystem fs_;
  ReservationStore store_{&fs_, kPath};
};

TEST_F(ReservationStoreTest, EveryFieldAndTheOrderSurviveARestart) {
  const Reservation first = Claim("claim-b", {"p3", "p1"}, {"pod-a", "pod-b"});
  Reservation second = Claim("claim-a", {"p2"}, {});
  second.owner.clear();
  second.created_unix = 1717171800;
  ASSERT_OK(store_.Put(first));
  ASSERT_OK(store_.Put(second));

  // Oldest first, not by owner: the order pods with two claims take ports in.
  EXPECT_THAT(Reload(), ElementsAre(first, second));
}

TEST_F(ReservationStoreTest, TheFileIsPrivateAndReadable) {
  ASSERT_OK(store_.Put(Claim("claim-a", {"p1", "p2"})));
  std::optional<FakeFileSystem::File> file = fs_.GetFile(kPath);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->mode, 0600u);
  const nlohmann::json json = nlohmann::json::parse(file->content);
  EXPECT_EQ(json["version"], 1);
  ASSERT_EQ(json["reservations"].size(), 1u);
  EXPECT_EQ(json["reservations"][0]["owner_uid"], "claim-a");
  EXPECT_EQ(json["reservations"][0]["owner"], "training/claim-a");
  EXPECT_EQ(json["reservations"][0]["port_ids"], nlohmann::json({"p1", "p2"}));
  EXPECT_EQ(json["reservations"][0]["pod_uids"], nlohmann::json({"pod-a"}));
}

TEST_F(ReservationStoreTest, LookupsByOwnerPortAndPod) {
  ASSERT_OK(store_.Put(Claim("claim-a", {"p1", "p2"}, {"pod-a"})));
  ASSERT_OK(store_.Put(Claim("claim-b", {"p3"}, {"pod-b", "pod-a"})));

  ASSERT_NE(store_.Find("claim-b"), nullptr);
  EXPECT_THAT(store_.Find("claim-b")->port_ids, ElementsAre("p3"));
  EXPECT_EQ(store_.Find("claim-c"), nullptr);
  ASSERT_NE(store_.FindByPort("p2"), nullptr);
  EXPECT_EQ(store_.FindByPort("p2")->owner_uid, "claim-a");
  EXPECT_EQ(store_.FindByPort("p4"), nullptr);
  const std::vector<const Reservation*> pod_a = store_.ForPod("pod-a");
  ASSERT_EQ(pod_a.size(), 2u);
  EXPECT_EQ(pod_a[0]->owner_uid, "claim-a");
  EXPECT_EQ(pod_a[1]->owner_uid, "claim-b");
  EXPECT_EQ(store_.ForPod("pod-b").size(), 1u);
  EXPECT_THAT(store_.ForPod("pod-c"), IsEmpty());
}

TEST_F(ReservationStoreTest, PutReplacesInPlaceAndEraseForgets) {
  ASSERT_OK(store_.Put(Claim("claim-a", {"p1"})));
  ASSERT_OK(store_.Put(Claim("claim-b", {"p2"})));
  const Reservation replaced = Claim("claim-a", {"p1"}, {"pod-a", "pod-c"});
  ASSERT_OK(store_.Put(replaced));
  EXPECT_THAT(Reload(), ElementsAre(replaced, Claim("claim-b", {"p2"})));

  ASSERT_OK(store_.Erase("claim-a"));
  EXPECT_EQ(store_.Find("claim-a"), nullptr);
  EXPECT_EQ(store_.FindByPort("p1"), nullptr);
  EXPECT_THAT(Reload(), ElementsAre(Claim("claim-b", {"p2"})));
}

TEST_F(ReservationStoreTest, ErasingAnUnknownOwnerWritesNothing) {
  ASSERT_OK(store_.Put(Claim("claim-a", {"p1"})));
  const int writes = fs_.write_count();
  EXPECT_OK(store_.Erase("claim-z"));
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_EQ(store_.All().size(), 1u);
}

TEST_F(ReservationStoreTest, AMissingFileIsNoReservations) {
  ASSERT_OK(store_.Load());
  EXPECT_THAT(store_.All(), IsEmpty());
  EXPECT_FALSE(fs_.GetFile(kPath).has_value());
}

TEST_F(ReservationStoreTest, ACorruptFileIsDataLossNamingThePath) {
  for (const char* content : {
           "{\"version\": 1, \"reservations\": [",
           "",
           "[]",
           R"({"version": 2, "reservations": []})",
           R"({"version": 1, "reservations": [{"owner_uid": "a"}]})",
           R"({"version": 1, "reservations": [{"owner_uid": "", "port_ids": ["p1"]}]})",
           R"({"version": 1, "reservations": [{"owner_uid": "a", "port_ids": []}]})",
           R"({"version": 1, "reservations": [{"owner_uid": "a", "port_ids": [1]}]})",
           // What no rocenetd writes: which of the two would win is a guess.
           R"({"version": 1, "reservations": [{"owner_uid": "a", "port_ids": ["p1"]},
                                              {"owner_uid": "a", "port_ids": ["p2"]}]})",
           R"({"version": 1, "reservations": [{"owner_uid": "a", "port_ids": ["p1"]},
                                              {"owner_uid": "b", "port_ids": ["p1"]}]})",
       }) {
    SCOPED_TRACE(content);
    fs_.AddFile(kPath, content);
    ReservationStore store(&fs_, kPath);
    EXPECT_THAT(store.Load(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr(kPath)));
    EXPECT_THAT(store.All(), IsEmpty());
  }
}

TEST_F(ReservationStoreTest, AFailedPutChangesNeitherMemoryNorTheFile) {
  const Reservation first = Claim("claim-a", {"p1"});
  ASSERT_OK(store_.Put(first));
  const std::string before = fs_.GetFile(kPath)->content;

  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  EXPECT_THAT(store_.Put(Claim("claim-b", {"p2"})), StatusIs(absl::StatusCode::kResourceExhausted));
  fs_.FailNextWrite(absl::PermissionDeniedError("write: Read-only file system"));
  EXPECT_FALSE(store_.Put(Claim("claim-a", {"p1"}, {"pod-z"})).ok());

  EXPECT_EQ(store_.FindByPort("p2"), nullptr);
  EXPECT_THAT(store_.All(), ElementsAre(first));
  EXPECT_EQ(fs_.GetFile(kPath)->content, before);
}

TEST_F(ReservationStoreTest, AFailedEraseKeepsTheReservation) {
  const Reservation reservation = Claim("claim-a", {"p1"});
  ASSERT_OK(store_.Put(reservation));
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  EXPECT_FALSE(store_.Erase("claim-a").ok());
  ASSERT_NE(store_.Find("claim-a"), nullptr);
  EXPECT_THAT(Reload(), ElementsAre(reservation));
}

TEST_F(ReservationStoreTest, HolderNameSaysWhoInWords) {
  EXPECT_EQ(HolderName(Claim("8c1d", {"p1"})), "owner training/8c1d (uid 8c1d)");
  Reservation unnamed = Claim("8c1d", {"p1"});
  unnamed.owner.clear();
  EXPECT_EQ(HolderName(unnamed), "owner uid 8c1d");
}

}  // namespace
}  // namespace rocenet::attach
