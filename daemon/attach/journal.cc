// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/journal.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "nlohmann/json.hpp"

namespace rocenet::attach {
namespace {

using nlohmann::json;
constexpr int kFormatVersion = 1;

absl::StatusOr<AttachState> ParseState(const std::string& text) {
  if (text == "attaching") return AttachState::kAttaching;
  if (text == "attached") return AttachState::kAttached;
  if (text == "detaching") return AttachState::kDetaching;
  return absl::InvalidArgumentError(absl::StrCat("unknown state \"", text, "\""));
}

json ToJson(const AttachmentRecord& r) {
  json routes = json::array();
  for (const addressing::Route& route : r.routes) {
    json entry = {{"destination", route.destination.ToString()}};
    if (route.gateway.has_value()) entry["gateway"] = route.gateway->ToString();
    routes.push_back(entry);
  }
  json out = {{"container_id", r.container_id},
              {"ifname", r.ifname},
              {"netns", r.netns},
              {"port_id", r.port_id},
              {"host_ifname", r.host_ifname},
              {"mac", r.mac},
              {"pci_address", r.pci_address},
              {"virtual_device", r.virtual_device},
              {"state", StateName(r.state)},
              {"pod", {{"namespace", r.pod.ns}, {"name", r.pod.name}, {"uid", r.pod.uid}}},
              {"cni_version", r.cni_version},
              {"network", r.network},
              {"created", r.created_unix},
              {"mtu", r.mtu},
              {"host_mtu", r.host_mtu},
              {"table", r.table},
              {"routes", routes}};
  if (r.local.has_value()) out["local"] = r.local->ToString();
  if (r.peer.has_value()) out["peer"] = r.peer->ToString();
  if (!r.rdma_device.empty()) out["rdma_device"] = r.rdma_device;
  return out;
}

absl::StatusOr<AttachmentRecord> FromJson(const json& in) {
  AttachmentRecord r;
  r.container_id = in.at("container_id").get<std::string>();
  r.ifname = in.at("ifname").get<std::string>();
  r.netns = in.at("netns").get<std::string>();
  r.port_id = in.at("port_id").get<std::string>();
  r.host_ifname = in.at("host_ifname").get<std::string>();
  r.mac = in.value("mac", "");
  r.pci_address = in.value("pci_address", "");
  r.virtual_device = in.value("virtual_device", false);
  r.rdma_device = in.value("rdma_device", "");
  ASSIGN_OR_RETURN(r.state, ParseState(in.at("state").get<std::string>()));
  const json pod = in.value("pod", json::object());
  r.pod = {pod.value("namespace", ""), pod.value("name", ""), pod.value("uid", "")};
  r.cni_version = in.value("cni_version", "");
  r.network = in.value("network", "");
  r.created_unix = in.value("created", int64_t{0});
  r.mtu = in.value("mtu", 0u);
  r.host_mtu = in.value("host_mtu", 0u);
  r.table = in.value("table", 0u);
  if (in.contains("local")) {
    ASSIGN_OR_RETURN(r.local, Ipv4Prefix::Parse(in.at("local").get<std::string>()));
  }
  if (in.contains("peer")) {
    ASSIGN_OR_RETURN(r.peer, Ipv4Address::Parse(in.at("peer").get<std::string>()));
  }
  for (const json& route : in.value("routes", json::array())) {
    addressing::Route out;
    ASSIGN_OR_RETURN(out.destination,
                     Ipv4Prefix::Parse(route.at("destination").get<std::string>()));
    if (route.contains("gateway")) {
      ASSIGN_OR_RETURN(out.gateway, Ipv4Address::Parse(route.at("gateway").get<std::string>()));
    }
    r.routes.push_back(out);
  }
  return r;
}

}  // namespace

absl::string_view StateName(AttachState state) {
  switch (state) {
    case AttachState::kAttaching:
      return "attaching";
    case AttachState::kAttached:
      return "attached";
    case AttachState::kDetaching:
      return "detaching";
  }
  return "unknown";
}

std::string SerializeJournal(const std::vector<AttachmentRecord>& records) {
  json list = json::array();
  for (const AttachmentRecord& r : records) list.push_back(ToJson(r));
  return json{{"version", kFormatVersion}, {"attachments", list}}.dump(
             2, ' ', false, json::error_handler_t::replace) +
         "\n";
}

absl::StatusOr<std::vector<AttachmentRecord>> ParseJournal(absl::string_view text) {
  std::vector<AttachmentRecord> out;
  try {
    const json root = json::parse(text.begin(), text.end());
    if (root.value("version", 0) != kFormatVersion) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported format version ", root.value("version", 0)));
    }
    for (const json& entry : root.at("attachments")) {
      ASSIGN_OR_RETURN(AttachmentRecord record, FromJson(entry));
      out.push_back(std::move(record));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid: ", e.what()));
  }
  return out;
}

absl::Status Journal::Load() {
  absl::StatusOr<std::string> text = fs_->ReadFile(path_);
  if (absl::IsNotFound(text.status())) return absl::OkStatus();
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<AttachmentRecord>> records = ParseJournal(*text);
  if (!records.ok()) {
    return absl::DataLossError(absl::StrCat(path_, ": ", records.status().message()));
  }
  records_.clear();
  for (AttachmentRecord& r : *records) {
    Key key{r.container_id, r.ifname};
    records_[key] = std::move(r);
  }
  return absl::OkStatus();
}

absl::Status Journal::Save(const std::map<Key, AttachmentRecord>& records) {
  std::vector<AttachmentRecord> list;
  for (const auto& [key, record] : records) list.push_back(record);
  return fs_->WriteFileAtomic(path_, SerializeJournal(list), 0600);
}

absl::Status Journal::Put(const AttachmentRecord& record) {
  std::map<Key, AttachmentRecord> next = records_;
  next[{record.container_id, record.ifname}] = record;
  RETURN_IF_ERROR(Save(next));
  records_ = std::move(next);
  return absl::OkStatus();
}

absl::Status Journal::Erase(const std::string& container_id, const std::string& ifname) {
  std::map<Key, AttachmentRecord> next = records_;
  if (next.erase({container_id, ifname}) == 0) return absl::OkStatus();
  RETURN_IF_ERROR(Save(next));
  records_ = std::move(next);
  return absl::OkStatus();
}

const AttachmentRecord* Journal::Find(const std::string& container_id,
                                      const std::string& ifname) const {
  auto it = records_.find({container_id, ifname});
  return it == records_.end() ? nullptr : &it->second;
}

const AttachmentRecord* Journal::FindByPort(const std::string& port_id) const {
  for (const auto& [key, record] : records_) {
    if (record.port_id == port_id) return &record;
  }
  return nullptr;
}

std::vector<AttachmentRecord> Journal::All() const {
  std::vector<AttachmentRecord> out;
  for (const auto& [key, record] : records_) out.push_back(record);
  return out;
}

absl::Status AdoptJournal(os::FileSystem& fs, const std::string& old_path,
                          const std::string& path) {
  if (old_path == path || !absl::IsNotFound(fs.ReadFile(path).status())) return absl::OkStatus();
  absl::StatusOr<std::string> old = fs.ReadFile(old_path);
  if (absl::IsNotFound(old.status())) return absl::OkStatus();
  if (!old.ok()) return old.status();
  RETURN_IF_ERROR(fs.WriteFileAtomic(path, *old, 0600));
  SPDLOG_INFO("took over the attachment journal {} as {}", old_path, path);
  return fs.RemoveFile(old_path);
}

}  // namespace rocenet::attach
