// SPDX-License-Identifier: Apache-2.0
#include "client/render/reservations_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/render/render_time.h"

namespace rocenet::rocectl {
namespace {

TEST(ReservationsRenderTest, Table) {
  v1::ListReservationsResponse response;
  v1::Reservation* r = response.add_reservations();
  r->set_owner_uid("8c1d2e3f");
  r->set_owner("training/llama-rdma");
  r->add_pod_uids("6a1f0c2e");
  r->add_pod_uids("7b2e1d3f");
  r->add_port_ids("0000:1a:00.0-p8");
  r->add_port_ids("0000:19:00.0-p8");
  r->mutable_created()->set_seconds(absl::ToUnixSeconds(kNow - absl::Minutes(3)));
  // Not yet reserved for any pod, and no name: dashes.
  v1::Reservation* bare = response.add_reservations();
  bare->set_owner_uid("9d2e");
  bare->add_port_ids("0000:1b:00.0-p8");
  bare->mutable_created()->set_seconds(absl::ToUnixSeconds(kNow - absl::Seconds(20)));
  EXPECT_EQ(RenderReservations(response, kNow),
            "OWNER                 OWNER UID   PODS                PORTS                          "
            "   AGE\n"
            "training/llama-rdma   8c1d2e3f    6a1f0c2e,7b2e1d3f   0000:1a:00.0-p8,0000:19:00.0-p8"
            "   3m\n"
            "-                     9d2e        -                   0000:1b:00.0-p8                "
            "   20s\n");
}

TEST(ReservationsRenderTest, Empty) {
  EXPECT_EQ(RenderReservations(v1::ListReservationsResponse(), kNow), "No ports are reserved.\n");
}

}  // namespace
}  // namespace rocenet::rocectl
