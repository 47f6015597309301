// SPDX-License-Identifier: Apache-2.0
// Reservations with HCL files on: Reserve writes the claim's files before it
// records the claim and answers where they are, a failure to write them
// reserves nothing, and Release takes them away.
#include <string>
#include <vector>

#include "daemon/attach/manager.h"
#include "daemon/attach/reservation_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kHclDir[] = "/run/rocenet/hcl";
constexpr char kUid[] = "6f1c0d52-93a4-4e7b-9b1e-0c5d2a7e8f10";
constexpr char kDir[] = "/run/rocenet/hcl/claim-6f1c0d52-93a4-4e7b-9b1e-0c5d2a7e8f10";

class ReservationFilesManagerTest : public AttachManagerTest {
 protected:
  void SetUp() override {
    hcl_files_ = &files_;
    Restart();
    std::vector<HclPort> ports;
    for (const PortCandidate& port : ports_) {
      ports.push_back(HclPort{.id = port.port_id,
                              .name = port.host_ifname,
                              .pci_address = port.pci_address,
                              .mac = port.mac,
                              .port_index = 8,
                              .gaudi = true,
                              .local = port.applied->local->ToString(),
                              .gateway_mac = "02:00:00:00:00:aa",
                              .l2 = false});
    }
    files_.Sync(ports, {});
  }

  absl::StatusOr<Reservation> Reserve(const std::string& owner_uid) {
    return manager_->Reserve(ReserveRequest{.owner_uid = owner_uid,
                                            .owner = "training/job",
                                            .pod_uids = {"uid-c1"},
                                            .port_ids = {kPort0}},
                             ports_, kNow);
  }

  ReservationFiles files_{&fs_, kHclDir};
};

TEST_F(ReservationFilesManagerTest, ReserveWritesTheFilesAndReleaseRemovesThem) {
  ASSERT_OK_AND_ASSIGN(Reservation reservation, Reserve(kUid));
  const HclDirectory want{.path = kDir, .files = {"gaudinet.json", "macAddrInfo.json"}};
  EXPECT_EQ(reservation.hcl, want);
  ASSERT_TRUE(fs_.GetFile(absl::StrCat(kDir, "/gaudinet.json")).has_value());
  EXPECT_THAT(fs_.GetFile(absl::StrCat(kDir, "/gaudinet.json"))->content, HasSubstr("10.200.1.1"));
  ASSERT_EQ(manager_->Reservations().size(), 1u);
  EXPECT_EQ(manager_->Reservations()[0].hcl, want);
  // Prepared again: the same answer.
  ASSERT_OK_AND_ASSIGN(Reservation again, Reserve(kUid));
  EXPECT_EQ(again, reservation);

  ASSERT_OK(manager_->ReleaseReservation(kUid));
  EXPECT_FALSE(fs_.HasDirectory(kDir));
  EXPECT_FALSE(fs_.GetFile(absl::StrCat(kDir, "/gaudinet.json")).has_value());
}

TEST_F(ReservationFilesManagerTest, AnOwnerUidThatIsNoUuidIsRefused) {
  EXPECT_THAT(Reserve("../../etc"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a UUID")));
  EXPECT_THAT(manager_->Reservations(), IsEmpty());
  EXPECT_EQ(fs_.write_count(), 0);
}

TEST_F(ReservationFilesManagerTest, AFailureToWriteTheFilesReservesNothing) {
  // The second file fails, after the first was written.
  fs_.FailWriteAfter(1, absl::ResourceExhaustedError("write: No space left on device"));
  EXPECT_THAT(Reserve(kUid), StatusIs(absl::StatusCode::kResourceExhausted,
                                      HasSubstr("write the HCL files of owner training/job")));
  EXPECT_THAT(manager_->Reservations(), IsEmpty());
  EXPECT_FALSE(fs_.GetFile(kReservations).has_value());
  // Nothing half-done: the file written first went again.
  EXPECT_FALSE(fs_.HasDirectory(kDir));
}

TEST_F(ReservationFilesManagerTest, AFailureToRecordTheReservationTakesItsFilesAway) {
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"), kReservations);
  EXPECT_THAT(Reserve(kUid),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("record the reservation")));
  EXPECT_THAT(manager_->Reservations(), IsEmpty());
  EXPECT_FALSE(fs_.HasDirectory(kDir));
}

}  // namespace
}  // namespace rocenet::attach
