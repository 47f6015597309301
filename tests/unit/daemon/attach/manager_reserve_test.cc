// SPDX-License-Identifier: Apache-2.0
// Reservations through the AttachManager: what Reserve and Release answer
// and refuse, and which port an Attach without a device id then takes (the
// CNI plugin under Multus, which knows the pod but not its DRA device),
// against fake kernels for the host and the pods.
#include <string>
#include <vector>

#include "daemon/attach/manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kClaimA[] = "claim-a-uid";
constexpr char kClaimB[] = "claim-b-uid";

ReserveRequest Reserving(const std::string& owner_uid, std::vector<std::string> ports,
                         std::vector<std::string> pods) {
  return ReserveRequest{.owner_uid = owner_uid,
                        .owner = "training/" + owner_uid.substr(0, owner_uid.find("-uid")),
                        .pod_uids = std::move(pods),
                        .port_ids = std::move(ports)};
}

class ReservationTest : public AttachManagerTest {
 protected:
  absl::StatusOr<Reservation> Reserve(const ReserveRequest& request, int64_t now = kNow) {
    return manager_->Reserve(request, ports_, now);
  }

  // What a restarted rocenetd would find.
  std::vector<Reservation> ReservationsOnDisk() {
    ReservationStore store(&fs_, kReservations);
    absl::Status loaded = store.Load();
    EXPECT_OK(loaded);
    return store.All();
  }
};

TEST_F(ReservationTest, ReserveRecordsTheReservationAndListShowsIt) {
  ASSERT_OK_AND_ASSIGN(const Reservation reservation,
                       Reserve(Reserving(kClaimA, {kPort1, kPort0}, {"uid-c1", "uid-c2"})));
  EXPECT_EQ(reservation, (Reservation{.owner_uid = kClaimA,
                                      .owner = "training/claim-a",
                                      .pod_uids = {"uid-c1", "uid-c2"},
                                      .port_ids = {kPort1, kPort0},
                                      .created_unix = kNow,
                                      .hcl = {}}));
  EXPECT_THAT(manager_->Reservations(), ElementsAre(reservation));
  EXPECT_THAT(ReservationsOnDisk(), ElementsAre(reservation));
}

TEST_F(ReservationTest, TheSameOwnerWithTheSamePortsGetsItsReservationWithTheNewPods) {
  ASSERT_OK_AND_ASSIGN(const Reservation first,
                       Reserve(Reserving(kClaimA, {kPort0, kPort1}, {"uid-c1"})));
  const int writes = fs_.write_count();
  // A repeated prepare: the same answer, nothing written.
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort0, kPort1}, {"uid-c1"}), kNow + 60),
              ::rocenet::testing::IsOkAndHolds(first));
  EXPECT_EQ(fs_.write_count(), writes);

  // The ports in another order are the same ports; the pods are replaced,
  // and the order and the creation time are the reservation's.
  ASSERT_OK_AND_ASSIGN(const Reservation second,
                       Reserve(Reserving(kClaimA, {kPort1, kPort0}, {"uid-c2"}), kNow + 60));
  EXPECT_THAT(second.port_ids, ElementsAre(kPort0, kPort1));
  EXPECT_THAT(second.pod_uids, ElementsAre("uid-c2"));
  EXPECT_EQ(second.created_unix, kNow);
  EXPECT_THAT(ReservationsOnDisk(), ElementsAre(second));
}

TEST_F(ReservationTest, ReserveRefusesBadRequestsAndWritesNothing) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c1"})));
  const Footprint before = Snapshot();
  const std::vector<Reservation> reserved = manager_->Reservations();

  EXPECT_THAT(Reserve(Reserving("", {kPort1}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("owner_uid is empty")));
  EXPECT_THAT(Reserve(Reserving(kClaimB, {}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no port ids")));
  EXPECT_THAT(Reserve(Reserving(kClaimB, {kPort1, kPort1}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("port id 0000:1a:00.0-p8 is listed twice")));
  EXPECT_THAT(Reserve(Reserving(kClaimB, {kPort1}, {""})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("an empty pod uid")));
  EXPECT_THAT(Reserve(Reserving(kClaimB, {kPort1, "0000:99:00.0-p1"}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("port id \"0000:99:00.0-p1\" is not a port of this node")));
  // Another owner's port, whoever asks.
  EXPECT_THAT(Reserve(Reserving(kClaimB, {kPort1, kPort0}, {"uid-c1"})),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("port 0000:19:00.0-p8 (so0) is reserved by owner "
                                 "training/claim-a (uid claim-a-uid)")));
  // A claim's allocation does not change while it is prepared.
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort1}, {"uid-c1"})),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("owner training/claim-a (uid claim-a-uid) already holds other "
                                 "ports: 0000:19:00.0-p8 (so0); release them first")));
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort0, kPort1}, {"uid-c1"})),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already holds")));

  before.ExpectUnchanged();
  EXPECT_EQ(manager_->Reservations(), reserved);
}

TEST_F(ReservationTest, APortAttachedToAPodOfTheClaimMayBeReservedAnotherPodsMayNot) {
  ASSERT_OK(Attach(Request("c1", kPort0)));
  const Footprint before = Snapshot();
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("port 0000:19:00.0-p8 (so0) is attached to pod "
                                 "training/worker-0 (uid uid-c1, container c1, net1)")));
  before.ExpectUnchanged();
  EXPECT_THAT(manager_->Reservations(), IsEmpty());

  // Prepared again after the pod's CNI ADD: still the claim's.
  EXPECT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c2", "uid-c1"})));
  // Its pods may change, but not so that the attached pod is no longer one.
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c2"})),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is attached to pod")));
}

TEST_F(ReservationTest, AFailedWriteReservesNothing) {
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  EXPECT_THAT(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c1"})),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("record the reservation: write: No space left on device")));
  EXPECT_THAT(manager_->Reservations(), IsEmpty());
  // Nothing holds the port: any pod may take it.
  absl::StatusOr<AttachmentRecord> any = Attach(AnyPort("c9"));
  ASSERT_OK(any);
  EXPECT_EQ(any->port_id, kPort0);
}

TEST_F(ReservationTest, ReleaseForgetsAndIsIdempotentAndAttachedPortsStay) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0, kPort1}, {"uid-c1"})));
  ASSERT_OK(Attach(Request("c1", "")));

  absl::StatusOr<std::optional<Reservation>> released = manager_->ReleaseReservation(kClaimA);
  ASSERT_OK(released);
  ASSERT_TRUE(released->has_value());
  EXPECT_THAT((*released)->port_ids, ElementsAre(kPort0, kPort1));
  EXPECT_THAT(manager_->Reservations(), IsEmpty());
  EXPECT_THAT(ReservationsOnDisk(), IsEmpty());
  // The attached port stays in its pod.
  ASSERT_NE(manager_->FindByPort(kPort0), nullptr);
  EXPECT_NE(Named(*pod_, "net1"), nullptr);

  const int writes = fs_.write_count();
  released = manager_->ReleaseReservation(kClaimA);
  ASSERT_OK(released);
  EXPECT_FALSE(released->has_value());
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_THAT(manager_->ReleaseReservation(""), StatusIs(absl::StatusCode::kInvalidArgument));

  // The other port is anyone's again.
  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> other = Attach(AnyPort("c2", kPod2));
  ASSERT_OK(other);
  EXPECT_EQ(other->port_id, kPort1);
}

TEST_F(ReservationTest, APodWithoutDeviceIdTakesItsReservedPortsInOrder) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort1, kPort0}, {"uid-c1"})));
  absl::StatusOr<AttachmentRecord> first = Attach(Request("c1", ""));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort1);
  EXPECT_EQ(Named(*pod_, "net1")->mac, so1_mac_);
  absl::StatusOr<AttachmentRecord> second = Attach(Request("c1", "", kPod, "net2"));
  ASSERT_OK(second);
  EXPECT_EQ(second->port_id, kPort0);

  const Footprint before = Snapshot();
  absl::StatusOr<AttachmentRecord> third = Attach(Request("c1", "", kPod, "net3"));
  EXPECT_THAT(third, StatusIs(absl::StatusCode::kResourceExhausted,
                              HasSubstr("no free port reserved for pod training/worker-0 (uid "
                                        "uid-c1): every port owner training/claim-a (uid "
                                        "claim-a-uid) reserved for it is attached "
                                        "(0000:1a:00.0-p8 (so1), 0000:19:00.0-p8 (so0))")));
  before.ExpectUnchanged();
}

TEST_F(ReservationTest, APodWithTwoClaimsTakesTheirPortsOldestClaimFirst) {
  ASSERT_OK(Reserve(Reserving(kClaimB, {kPort1}, {"uid-c1"})));
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c1"})));
  absl::StatusOr<AttachmentRecord> first = Attach(Request("c1", ""));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort1);
  absl::StatusOr<AttachmentRecord> second = Attach(Request("c1", "", kPod, "net2"));
  ASSERT_OK(second);
  EXPECT_EQ(second->port_id, kPort0);
}

TEST_F(ReservationTest, AReservedPortIsTakenWhateverItsHealthButNotWithoutAnAddress) {
  ports_[0].healthy = false;
  ports_[0].conditions = "LinkDown/NoCarrier";
  ports_[1].provisioned = false;
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c1"})));
  ASSERT_OK(Reserve(Reserving(kClaimB, {kPort1}, {"uid-c2"})));

  // The scheduler weighed its health, as kubelet does with a device id.
  absl::StatusOr<AttachmentRecord> unhealthy = Attach(Request("c1", ""));
  ASSERT_OK(unhealthy);
  EXPECT_EQ(unhealthy->port_id, kPort0);

  // Without an address it is refused, and no other port is taken instead.
  netns_.AddNamespace(kPod2);
  const Footprint before = Snapshot();
  EXPECT_THAT(Attach(Request("c2", "", kPod2)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the port owner training/claim-b (uid claim-b-uid) reserved for "
                                 "pod training/worker-0 (uid uid-c2): port 0000:1a:00.0-p8 (so1) "
                                 "has no address from LLDP yet")));
  before.ExpectUnchanged();
}

TEST_F(ReservationTest, AReservedPortThatIsGoneIsRefusedNotReplaced) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c1"})));
  host_.RemoveLink(kSo0);
  EXPECT_THAT(Attach(Request("c1", "")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("port 0000:19:00.0-p8 (so0) is not in the host namespace")));
  ports_.erase(ports_.begin());
  EXPECT_THAT(Attach(Request("c1", "")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("port 0000:19:00.0-p8 is not a port of this node any more")));
  EXPECT_EQ(Named(*pod_, "net1"), nullptr);
}

TEST_F(ReservationTest, AnyFreePortSkipsPortsReservedForOthersAndSaysForWhom) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c9"})));
  absl::StatusOr<AttachmentRecord> first = Attach(AnyPort("c1"));
  ASSERT_OK(first);
  EXPECT_EQ(first->port_id, kPort1);

  netns_.AddNamespace(kPod2);
  EXPECT_THAT(Attach(AnyPort("c2", kPod2)),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("no free port: port 0000:19:00.0-p8 (so0) is reserved by owner "
                                 "training/claim-a (uid claim-a-uid), not for pod "
                                 "training/worker-0 (uid uid-c2); port 0000:1a:00.0-p8 (so1) is "
                                 "attached to pod")));
  // A pod whose uid the runtime did not give cannot be a claim's.
  AttachRequest anonymous = AnyPort("c3", kPod2);
  anonymous.pod.uid.clear();
  EXPECT_THAT(Attach(anonymous),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("is reserved by owner training/claim-a (uid claim-a-uid), not "
                                 "for a pod whose uid was not given")));
}

TEST_F(ReservationTest, ADeviceIdOfAPortReservedForAnotherOwnersPodsIsRefused) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort0}, {"uid-c9"})));
  const Footprint before = Snapshot();
  EXPECT_THAT(Attach(Request("c1", kPort0)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("port 0000:19:00.0-p8 (so0) is reserved by owner "
                                 "training/claim-a (uid claim-a-uid), not for pod "
                                 "training/worker-0 (uid uid-c1)")));
  // By PCI function too.
  EXPECT_THAT(Attach(Request("c1", "0000:19:00.0")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no free port on PCI function 0000:19:00.0: port "
                                 "0000:19:00.0-p8 (so0) is reserved by owner training/claim-a")));
  before.ExpectUnchanged();

  // A pod of the claim may name it, and an unreserved port is anyone's.
  netns_.AddNamespace(kPod2);
  EXPECT_OK(Attach(Request("c9", kPort0, kPod2)));
  EXPECT_OK(Attach(Request("c1", kPort1)));
}

TEST_F(ReservationTest, ReservationsSurviveARestart) {
  ASSERT_OK(Reserve(Reserving(kClaimA, {kPort1}, {"uid-c1"})));
  const std::vector<Reservation> reserved = manager_->Reservations();
  Restart();
  EXPECT_EQ(manager_->Reservations(), reserved);

  netns_.AddNamespace(kPod2);
  absl::StatusOr<AttachmentRecord> other = Attach(AnyPort("c2", kPod2));
  ASSERT_OK(other);
  EXPECT_EQ(other->port_id, kPort0);
  absl::StatusOr<AttachmentRecord> mine = Attach(Request("c1", ""));
  ASSERT_OK(mine);
  EXPECT_EQ(mine->port_id, kPort1);
}

}  // namespace
}  // namespace rocenet::attach
