// SPDX-License-Identifier: Apache-2.0
#include "client/render/attachments_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/render/health_render.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

std::string Pod(const v1::Attachment& attachment) {
  const v1::PodIdentity& pod = attachment.pod();
  if (pod.name().empty()) return "-";
  return pod.namespace_().empty() ? pod.name() : absl::StrCat(pod.namespace_(), "/", pod.name());
}

std::string Addresses(const v1::Attachment& attachment) {
  std::vector<std::string> addresses;
  for (const v1::IpConfig& ip : attachment.ips()) addresses.push_back(ip.address());
  return addresses.empty() ? "-" : absl::StrJoin(addresses, ",");
}

std::string Routes(const v1::Attachment& attachment) {
  std::vector<std::string> routes;
  for (const v1::RouteConfig& route : attachment.routes()) {
    routes.push_back(route.gateway().empty()
                         ? route.destination()
                         : absl::StrCat(route.destination(), " via ", route.gateway()));
  }
  return routes.empty() ? "-" : absl::StrJoin(routes, ",");
}

// Container ids are 64 hex digits; 12 are enough to tell them apart, as in
// docker ps.
std::string ShortContainer(const std::string& id) { return id.empty() ? "-" : id.substr(0, 12); }

}  // namespace

std::string RenderAttachments(const v1::ListAttachmentsResponse& response, absl::Time now,
                              bool wide) {
  if (response.attachments().empty()) return "No ports are attached to pods.\n";
  std::vector<std::string> headers = {"POD", "PORT", "IFNAME", "ADDRESS", "STATE", "AGE"};
  if (wide) {
    for (const char* extra :
         {"NETWORK", "PORT ID", "CONTAINER", "NETNS", "MAC", "MTU", "TABLE", "ROUTES", "CNI"}) {
      headers.push_back(extra);
    }
  }
  TextTable table(std::move(headers));
  for (const v1::Attachment& attachment : response.attachments()) {
    std::vector<std::string> row = {Pod(attachment),
                                    OrDash(attachment.host_ifname()),
                                    OrDash(attachment.ifname()),
                                    Addresses(attachment),
                                    OrDash(attachment.state()),
                                    FormatSince(attachment.created(), now)};
    if (wide) {
      const std::vector<std::string> more = {
          OrDash(attachment.network()),
          OrDash(attachment.port_id()),
          ShortContainer(attachment.container_id()),
          OrDash(attachment.netns()),
          OrDash(attachment.mac()),
          attachment.mtu() > 0 ? absl::StrCat(attachment.mtu()) : "-",
          attachment.table() > 0 ? absl::StrCat(attachment.table()) : "-",
          Routes(attachment),
          OrDash(attachment.cni_version())};
      row.insert(row.end(), more.begin(), more.end());
    }
    table.AddRow(std::move(row));
  }
  return table.Render();
}

}  // namespace rocenet::rocectl
