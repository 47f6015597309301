// SPDX-License-Identifier: Apache-2.0
// Decoding of RTM_NEWLINK / RTM_DELLINK messages into LinkInfo.
// Pure functions over one message; no I/O except the ethtool query.
#pragma once

#include <optional>

#include "daemon/os/link.h"

struct nlmsghdr;

namespace rocenet::os {

// The link a message describes; nullopt for messages of other types.
std::optional<LinkEvent> ParseLinkMessage(const nlmsghdr* header);

// Fills speed (and the permanent MAC when rtnetlink had none) from the
// ethtool ioctl on `ethtool_fd`, an AF_INET datagram socket. Failures leave
// the fields as they are: many virtual devices do not answer.
void AddEthtoolInfo(int ethtool_fd, LinkInfo& link);

}  // namespace rocenet::os
