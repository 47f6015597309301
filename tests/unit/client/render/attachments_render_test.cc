// SPDX-License-Identifier: Apache-2.0
#include "client/render/attachments_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/render/render_time.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;

v1::ListAttachmentsResponse SampleAttachments() {
  v1::ListAttachmentsResponse response;
  v1::Attachment* a = response.add_attachments();
  a->set_container_id("0123456789abcdef0123456789abcdef");
  a->set_netns("/var/run/netns/cni-1234");
  a->set_ifname("net1");
  a->set_port_id("0000:19:00.0-p8");
  a->set_host_ifname("so0");
  a->set_mac("02:5e:00:ef:00:00");
  a->set_mtu(8000);
  a->set_table(1008);
  a->add_ips()->set_address("10.200.1.1/30");
  v1::RouteConfig* route = a->add_routes();
  route->set_destination("10.200.0.0/16");
  route->set_gateway("10.200.1.2");
  a->mutable_pod()->set_namespace_("training");
  a->mutable_pod()->set_name("llama-0");
  a->set_cni_version("1.0.0");
  a->set_network("gaudi-net");
  a->mutable_created()->set_seconds(absl::ToUnixSeconds(kNow - absl::Minutes(7)));
  a->set_state("attached");
  return response;
}

TEST(AttachmentsRenderTest, Table) {
  EXPECT_EQ(RenderAttachments(SampleAttachments(), kNow, false),
            "POD                PORT   IFNAME   ADDRESS         STATE      AGE\n"
            "training/llama-0   so0    net1     10.200.1.1/30   attached   7m\n");
}

TEST(AttachmentsRenderTest, WideAndEmpty) {
  const std::string wide = RenderAttachments(SampleAttachments(), kNow, true);
  EXPECT_THAT(wide, HasSubstr("NETWORK     PORT ID"));
  EXPECT_THAT(wide, HasSubstr("gaudi-net   0000:19:00.0-p8"));
  EXPECT_THAT(wide, HasSubstr("0123456789ab "));
  EXPECT_THAT(wide, HasSubstr("10.200.0.0/16 via 10.200.1.2"));
  EXPECT_THAT(wide, HasSubstr("1008"));
  EXPECT_EQ(RenderAttachments(v1::ListAttachmentsResponse(), kNow, false),
            "No ports are attached to pods.\n");
}

}  // namespace
}  // namespace rocenet::rocectl
