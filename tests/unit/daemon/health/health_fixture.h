// What the health tests share: a managed port that is present and up.
#pragma once

#include <string>

#include "daemon/inventory/port.h"
#include "tests/unit/fakes/fake_netlink.h"

namespace rocenet::health {

inline inventory::Port UpPort(const std::string& name) {
  inventory::Port port;
  port.id = "if-" + name;
  port.name = name;
  port.present = true;
  port.link = ::rocenet::testing::MakeLink(2, name);
  return port;
}

}  // namespace rocenet::health
