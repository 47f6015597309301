// SPDX-License-Identifier: Apache-2.0
// Failure messages in the words of `ip` and the journal rather than bytes:
// GoogleTest finds these PrintTo overloads next to the types.
#pragma once

#include <ostream>

#include "daemon/attach/record.h"
#include "daemon/attach/reservations.h"
#include "daemon/os/address.h"
#include "daemon/os/link.h"

namespace rocenet::os {

inline void PrintTo(const AddressInfo& a, std::ostream* os) {
  *os << a.prefix.ToString() << " dev " << a.ifindex;
}

inline void PrintTo(const RouteInfo& r, std::ostream* os) {
  *os << r.destination.ToString();
  if (r.gateway.has_value()) *os << " via " << r.gateway->ToString();
  *os << " dev " << r.ifindex << " proto " << int{r.protocol} << " table " << r.table << " metric "
      << r.metric;
}

inline void PrintTo(const RuleInfo& r, std::ostream* os) {
  *os << r.priority << ": from " << r.source.ToString() << " lookup " << r.table << " proto "
      << int{r.protocol};
}

inline void PrintTo(const LinkInfo& l, std::ostream* os) {
  *os << l.ifindex << ": " << l.name << " " << l.mac.ToString() << (l.admin_up ? " UP" : " DOWN")
      << " mtu " << l.mtu << (l.kind.empty() ? "" : " kind ") << l.kind;
}

}  // namespace rocenet::os

namespace rocenet::attach {

inline void PrintTo(const AttachmentRecord& r, std::ostream* os) {
  *os << "{" << r.container_id << "/" << r.ifname << " in " << r.netns << ": port " << r.port_id
      << " (" << r.host_ifname << ") " << StateName(r.state);
  if (r.local.has_value()) *os << " local " << r.local->ToString();
  *os << " table " << r.table << " mtu " << r.mtu << "}";
}

inline void PrintTo(const Reservation& r, std::ostream* os) {
  *os << "{" << r.owner << " (" << r.owner_uid << "): ports";
  for (const std::string& port_id : r.port_ids) *os << " " << port_id;
  *os << " for pods";
  for (const std::string& pod_uid : r.pod_uids) *os << " " << pod_uid;
  *os << " since " << r.created_unix << "}";
}

}  // namespace rocenet::attach
