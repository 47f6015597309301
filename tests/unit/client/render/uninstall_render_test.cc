// SPDX-License-Identifier: Apache-2.0
#include "client/render/uninstall_render.h"

#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

TEST(UninstallRenderTest, RemovedInOrderThenKeptWithTheReason) {
  v1::UninstallResponse response;
  response.add_removed()->set_what("route 10.200.0.0/16 via 10.200.1.2 dev so0");
  response.add_removed()->set_what("directory /var/lib/rocenet");
  v1::UninstallItem* kept = response.add_kept();
  kept->set_what("file /opt/cni/bin/rocenet");
  kept->set_reason("the CNI plugin: a pod still uses a port");
  EXPECT_EQ(RenderUninstall(response),
            "Removed:\n"
            "  route 10.200.0.0/16 via 10.200.1.2 dev so0\n"
            "  directory /var/lib/rocenet\n"
            "Kept:\n"
            "  file /opt/cni/bin/rocenet: the CNI plugin: a pod still uses a port\n");
}

TEST(UninstallRenderTest, ASecondCallSaysNothingWasLeft) {
  EXPECT_EQ(RenderUninstall(v1::UninstallResponse()), "Nothing was left to remove.\n");
}

}  // namespace
}  // namespace rocenet::rocectl
