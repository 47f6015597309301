// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/network_manager_sd_bus.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"

namespace rocenet::os {
namespace {

constexpr char kService[] = "org.freedesktop.NetworkManager";
constexpr char kManagerPath[] = "/org/freedesktop/NetworkManager";
constexpr char kManagerInterface[] = "org.freedesktop.NetworkManager";
constexpr char kDeviceInterface[] = "org.freedesktop.NetworkManager.Device";
constexpr char kPropertiesInterface[] = "org.freedesktop.DBus.Properties";
// NM_MANAGER_RELOAD_FLAG_CONF: NetworkManager.conf and its drop-ins only,
// not DNS.
constexpr uint32_t kReloadConf = 0x1;
constexpr char kUnknownDevice[] = "org.freedesktop.NetworkManager.UnknownDevice";

struct MessageUnref {
  void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};
using Message = std::unique_ptr<sd_bus_message, MessageUnref>;

// An sd_bus_error freed on every path.
struct BusError {
  sd_bus_error error = SD_BUS_ERROR_NULL;
  ~BusError() { sd_bus_error_free(&error); }
};

std::string SystemBusAddress() {
  const char* address = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
  return address != nullptr && *address != '\0' ? address : "unix:path=/run/dbus/system_bus_socket";
}

// A failed call as a status: "<what>: <D-Bus error name>: <message>", or the
// errno's text for a failure of the connection itself.
absl::Status CallError(int result, const sd_bus_error& error, absl::string_view what) {
  if (!sd_bus_error_is_set(&error)) return rocenet::ErrnoToStatus(-result, what);
  absl::StatusCode code = rocenet::ErrnoToCode(sd_bus_error_get_errno(&error));
  if (sd_bus_error_has_name(&error, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
      sd_bus_error_has_name(&error, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
    code = absl::StatusCode::kUnavailable;
  } else if (sd_bus_error_has_name(&error, kUnknownDevice)) {
    code = absl::StatusCode::kNotFound;
  } else if (sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_REPLY) ||
             sd_bus_error_has_name(&error, SD_BUS_ERROR_TIMEOUT)) {
    code = absl::StatusCode::kDeadlineExceeded;
  }
  return absl::Status(code, absl::StrCat(what, ": ", error.name, ": ",
                                         error.message != nullptr ? error.message : ""));
}

// Calls `member` of NetworkManager without auto-start: a NetworkManager
// that is not running stays so. `append` adds the arguments.
template <typename Append>
absl::StatusOr<Message> Call(sd_bus* bus, const std::string& path, const char* interface,
                             const char* member, Append append, absl::string_view what,
                             int& result) {
  sd_bus_message* raw = nullptr;
  result = sd_bus_message_new_method_call(bus, &raw, kService, path.c_str(), interface, member);
  if (result < 0) return rocenet::ErrnoToStatus(-result, what);
  Message call(raw);
  result = append(call.get());
  if (result >= 0) result = sd_bus_message_set_auto_start(call.get(), 0);
  if (result < 0) return rocenet::ErrnoToStatus(-result, what);
  BusError error;
  sd_bus_message* reply = nullptr;
  result =
      sd_bus_call(bus, call.get(), absl::ToInt64Microseconds(NetworkManagerSdBus::kCallTimeout),
                  &error.error, &reply);
  if (result < 0) return CallError(result, error.error, what);
  return Message(reply);
}

}  // namespace

NetworkManagerSdBus::~NetworkManagerSdBus() {
  if (bus_ != nullptr) sd_bus_flush_close_unref(bus_);
}

absl::StatusOr<sd_bus*> NetworkManagerSdBus::Bus() {
  if (bus_ != nullptr && sd_bus_is_open(bus_) > 0) return bus_;
  if (bus_ != nullptr) bus_ = sd_bus_flush_close_unref(bus_);
  sd_bus* bus = nullptr;
  int r = sd_bus_open_system(&bus);
  if (r < 0) {
    return absl::UnavailableError(
        ErrnoMessage(-r, absl::StrCat("system bus ", SystemBusAddress())));
  }
  r = sd_bus_set_method_call_timeout(bus, absl::ToInt64Microseconds(kCallTimeout));
  BusError error;
  sd_bus_message* raw = nullptr;
  if (r >= 0) {
    r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus", "NameHasOwner", &error.error, &raw, "s",
                           kService);
  }
  Message reply(raw);
  int owned = 0;
  if (r >= 0) r = sd_bus_message_read(reply.get(), "b", &owned);
  if (r < 0 || !owned) {
    sd_bus_flush_close_unref(bus);
    if (r >= 0) return absl::UnavailableError("NetworkManager is not on the system bus");
    const absl::Status status =
        CallError(r, error.error, absl::StrCat("system bus ", SystemBusAddress()));
    return absl::UnavailableError(status.message());
  }
  bus_ = bus;
  return bus_;
}

void NetworkManagerSdBus::DropIfBroken(int result) {
  if (bus_ == nullptr) return;
  if (result == -ENOTCONN || result == -ECONNRESET || result == -EPIPE ||
      sd_bus_is_open(bus_) <= 0) {
    bus_ = sd_bus_flush_close_unref(bus_);
  }
}

absl::Status NetworkManagerSdBus::ReloadConfiguration() {
  ASSIGN_OR_RETURN(sd_bus * bus, Bus());
  int r = 0;
  absl::StatusOr<Message> reply = Call(
      bus, kManagerPath, kManagerInterface, "Reload",
      [](sd_bus_message* m) { return sd_bus_message_append(m, "u", kReloadConf); },
      "NetworkManager: reload its configuration", r);
  DropIfBroken(r);
  return reply.status();
}

absl::StatusOr<std::string> NetworkManagerSdBus::DevicePath(absl::string_view interface_name) {
  ASSIGN_OR_RETURN(sd_bus * bus, Bus());
  const std::string name(interface_name);
  int r = 0;
  absl::StatusOr<Message> reply = Call(
      bus, kManagerPath, kManagerInterface, "GetDeviceByIpIface",
      [&name](sd_bus_message* m) { return sd_bus_message_append(m, "s", name.c_str()); },
      absl::StrCat("NetworkManager device ", name), r);
  DropIfBroken(r);
  if (!reply.ok()) return reply.status();
  const char* path = nullptr;
  r = sd_bus_message_read(reply->get(), "o", &path);
  if (r < 0)
    return rocenet::ErrnoToStatus(-r, absl::StrCat("NetworkManager device ", name, ": read path"));
  return std::string(path);
}

absl::StatusOr<bool> NetworkManagerSdBus::IsManaged(absl::string_view interface_name) {
  ASSIGN_OR_RETURN(std::string path, DevicePath(interface_name));
  int r = 0;
  const std::string what = absl::StrCat("NetworkManager device ", interface_name, ": get Managed");
  absl::StatusOr<Message> reply = Call(
      bus_, path, kPropertiesInterface, "Get",
      [](sd_bus_message* m) { return sd_bus_message_append(m, "ss", kDeviceInterface, "Managed"); },
      what, r);
  DropIfBroken(r);
  if (!reply.ok()) return reply.status();
  int managed = 0;
  r = sd_bus_message_read(reply->get(), "v", "b", &managed);
  if (r < 0) return rocenet::ErrnoToStatus(-r, what);
  return managed != 0;
}

absl::Status NetworkManagerSdBus::SetUnmanaged(absl::string_view interface_name) {
  ASSIGN_OR_RETURN(std::string path, DevicePath(interface_name));
  int r = 0;
  absl::StatusOr<Message> reply = Call(
      bus_, path, kPropertiesInterface, "Set",
      [](sd_bus_message* m) {
        return sd_bus_message_append(m, "ssv", kDeviceInterface, "Managed", "b", 0);
      },
      absl::StrCat("NetworkManager device ", interface_name, ": set Managed to false"), r);
  DropIfBroken(r);
  return reply.status();
}

}  // namespace rocenet::os
