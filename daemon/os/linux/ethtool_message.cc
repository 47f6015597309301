// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/ethtool_message.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace rocenet::os {
namespace {

// Linux 6.2's ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT (u32), newer than the
// headers of Debian 12.
constexpr uint16_t kLinkStateExtDownCount = ETHTOOL_A_LINKSTATE_EXT_SUBSTATE + 1;

size_t GenlAlign(size_t n) { return NLA_ALIGN(n); }

void GenlAppend(std::string& out, uint16_t type, absl::string_view payload) {
  nlattr attr{};
  attr.nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  attr.nla_type = type;
  out.append(reinterpret_cast<const char*>(&attr), sizeof(attr));
  out.append(payload.data(), payload.size());
  out.append(GenlAlign(payload.size()) - payload.size(), '\0');
}

template <typename T>
absl::string_view GenlBytes(const T& value) {
  return absl::string_view(reinterpret_cast<const char*>(&value), sizeof(value));
}

std::string GenlMessage(uint16_t type, uint8_t command, uint8_t version, const std::string& attrs,
                        uint32_t seq) {
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + GENL_HDRLEN + attrs.size());
  header.nlmsg_type = type;
  header.nlmsg_flags = NLM_F_REQUEST;
  header.nlmsg_seq = seq;
  genlmsghdr genl{};
  genl.cmd = command;
  genl.version = version;
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  out.append(reinterpret_cast<const char*>(&genl), sizeof(genl));
  out.append(GENL_HDRLEN - sizeof(genl), '\0');
  out += attrs;
  return out;
}

std::string GenlRequestHeader(absl::string_view ifname, uint32_t flags) {
  std::string nest;
  GenlAppend(nest, ETHTOOL_A_HEADER_DEV_NAME, absl::StrCat(ifname, std::string(1, '\0')));
  if (flags != 0) GenlAppend(nest, ETHTOOL_A_HEADER_FLAGS, GenlBytes(flags));
  std::string out;
  GenlAppend(out, 1 | NLA_F_NESTED, nest);  // ETHTOOL_A_*_HEADER is 1 in every command
  return out;
}

// Calls `f(type, payload)` for each attribute of `bytes`; false when one
// runs past the end.
template <typename F>
bool GenlForEach(absl::string_view bytes, F f) {
  while (bytes.size() >= NLA_HDRLEN) {
    nlattr attr;
    std::memcpy(&attr, bytes.data(), sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN || attr.nla_len > bytes.size()) return false;
    f(static_cast<uint16_t>(attr.nla_type & NLA_TYPE_MASK),
      bytes.substr(NLA_HDRLEN, attr.nla_len - NLA_HDRLEN));
    bytes.remove_prefix(std::min<size_t>(GenlAlign(attr.nla_len), bytes.size()));
  }
  return true;
}

template <typename T>
std::optional<T> GenlScalar(absl::string_view payload) {
  if (payload.size() < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, payload.data(), sizeof(T));
  return value;
}

// A FEC statistic: an array of u64, the total first, then one per lane.
std::optional<uint64_t> FecTotal(absl::string_view payload) {
  return GenlScalar<uint64_t>(payload);
}

}  // namespace

std::string BuildGetEthtoolFamily(uint32_t seq) {
  std::string attrs;
  GenlAppend(attrs, CTRL_ATTR_FAMILY_NAME, absl::string_view(ETHTOOL_GENL_NAME, 8));
  return GenlMessage(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, attrs, seq);
}

std::string BuildLinkStateGet(uint16_t family, absl::string_view ifname, uint32_t seq) {
  return GenlMessage(family, ETHTOOL_MSG_LINKSTATE_GET, ETHTOOL_GENL_VERSION,
                     GenlRequestHeader(ifname, 0), seq);
}

std::string BuildFecGet(uint16_t family, absl::string_view ifname, uint32_t seq) {
  return GenlMessage(family, ETHTOOL_MSG_FEC_GET, ETHTOOL_GENL_VERSION,
                     GenlRequestHeader(ifname, ETHTOOL_FLAG_STATS), seq);
}

std::string BuildModuleEepromGet(uint16_t family, absl::string_view ifname, int page, int bank,
                                 int offset, int length, uint32_t seq) {
  std::string attrs = GenlRequestHeader(ifname, 0);
  GenlAppend(attrs, ETHTOOL_A_MODULE_EEPROM_OFFSET, GenlBytes(static_cast<uint32_t>(offset)));
  GenlAppend(attrs, ETHTOOL_A_MODULE_EEPROM_LENGTH, GenlBytes(static_cast<uint32_t>(length)));
  GenlAppend(attrs, ETHTOOL_A_MODULE_EEPROM_PAGE, GenlBytes(static_cast<uint8_t>(page)));
  GenlAppend(attrs, ETHTOOL_A_MODULE_EEPROM_BANK, GenlBytes(static_cast<uint8_t>(bank)));
  GenlAppend(attrs, ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, GenlBytes(static_cast<uint8_t>(0x50)));
  return GenlMessage(family, ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION, attrs, seq);
}

absl::StatusOr<EthtoolReply> ParseEthtoolMessage(absl::string_view bytes, size_t* length) {
  if (bytes.size() < NLMSG_HDRLEN) return absl::InvalidArgumentError("truncated netlink header");
  nlmsghdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > bytes.size()) {
    return absl::InvalidArgumentError("netlink message length out of bounds");
  }
  *length = std::min<size_t>(NLMSG_ALIGN(header.nlmsg_len), bytes.size());
  EthtoolReply out;
  out.seq = header.nlmsg_seq;
  const absl::string_view body = bytes.substr(NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
  if (header.nlmsg_type == NLMSG_ERROR) {
    std::optional<int> error = GenlScalar<int>(body);
    if (!error.has_value()) return absl::InvalidArgumentError("truncated NLMSG_ERROR");
    out.error = -*error;
    return out;
  }
  if (header.nlmsg_type == NLMSG_DONE || header.nlmsg_type < NLMSG_MIN_TYPE) return out;
  if (body.size() < GENL_HDRLEN) return absl::InvalidArgumentError("truncated genetlink header");
  genlmsghdr genl;
  std::memcpy(&genl, body.data(), sizeof(genl));
  const absl::string_view attrs = body.substr(GENL_HDRLEN);
  bool ok = true;
  if (header.nlmsg_type == GENL_ID_CTRL) {
    ok = GenlForEach(attrs, [&](uint16_t type, absl::string_view payload) {
      if (type == CTRL_ATTR_FAMILY_ID) out.family = GenlScalar<uint16_t>(payload);
    });
  } else if (genl.cmd == ETHTOOL_MSG_LINKSTATE_GET_REPLY) {
    LinkState& state = out.link_state.emplace();
    std::optional<uint8_t> ext_state;
    std::optional<uint8_t> ext_substate;
    ok = GenlForEach(attrs, [&](uint16_t type, absl::string_view payload) {
      if (type == ETHTOOL_A_LINKSTATE_LINK) {
        if (std::optional<uint8_t> link = GenlScalar<uint8_t>(payload)) state.link = *link != 0;
      } else if (type == ETHTOOL_A_LINKSTATE_EXT_STATE) {
        ext_state = GenlScalar<uint8_t>(payload);
      } else if (type == ETHTOOL_A_LINKSTATE_EXT_SUBSTATE) {
        ext_substate = GenlScalar<uint8_t>(payload);
      } else if (type == kLinkStateExtDownCount) {
        state.down_count = GenlScalar<uint32_t>(payload);
      }
    });
    if (ext_state.has_value()) {
      state.down_reason = LinkExtStateName(*ext_state);
      if (ext_substate.has_value()) {
        state.down_detail = LinkExtSubstateName(*ext_state, *ext_substate);
      }
    }
  } else if (genl.cmd == ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY) {
    ok = GenlForEach(attrs, [&](uint16_t type, absl::string_view payload) {
      if (type == ETHTOOL_A_MODULE_EEPROM_DATA) out.eeprom = std::string(payload);
    });
  } else if (genl.cmd == ETHTOOL_MSG_FEC_GET_REPLY) {
    FecStats& fec = out.fec.emplace();
    bool stats_ok = true;
    ok = GenlForEach(attrs, [&](uint16_t type, absl::string_view payload) {
      if (type != ETHTOOL_A_FEC_STATS) return;
      stats_ok &= GenlForEach(payload, [&](uint16_t stat, absl::string_view values) {
        if (stat == ETHTOOL_A_FEC_STAT_CORRECTED) fec.corrected_blocks = FecTotal(values);
        if (stat == ETHTOOL_A_FEC_STAT_UNCORR) fec.uncorrectable_blocks = FecTotal(values);
        if (stat == ETHTOOL_A_FEC_STAT_CORR_BITS) fec.corrected_bits = FecTotal(values);
      });
    });
    ok = ok && stats_ok;
  }
  if (!ok) return absl::InvalidArgumentError("attribute length out of bounds");
  return out;
}

std::string LinkExtStateName(uint8_t state) {
  static constexpr const char* kNames[] = {"AUTONEG",
                                           "LINK_TRAINING_FAILURE",
                                           "LINK_LOGICAL_MISMATCH",
                                           "BAD_SIGNAL_INTEGRITY",
                                           "NO_CABLE",
                                           "CABLE_ISSUE",
                                           "EEPROM_ISSUE",
                                           "CALIBRATION_FAILURE",
                                           "POWER_BUDGET_EXCEEDED",
                                           "OVERHEAT",
                                           "MODULE"};
  if (state < std::size(kNames)) return kNames[state];
  return absl::StrCat("STATE_", state);
}

std::string LinkExtSubstateName(uint8_t state, uint8_t substate) {
  if (substate == 0) return "";
  auto pick = [&](std::initializer_list<const char*> names) -> std::string {
    if (substate <= names.size()) return *(names.begin() + substate - 1);
    return absl::StrCat("SUBSTATE_", substate);
  };
  switch (state) {
    case ETHTOOL_LINK_EXT_STATE_AUTONEG:
      return pick({"NO_PARTNER_DETECTED", "ACK_NOT_RECEIVED", "NEXT_PAGE_EXCHANGE_FAILED",
                   "NO_PARTNER_DETECTED_FORCE_MODE", "FEC_MISMATCH_DURING_OVERRIDE", "NO_HCD"});
    case ETHTOOL_LINK_EXT_STATE_LINK_TRAINING_FAILURE:
      return pick({"KR_FRAME_LOCK_NOT_ACQUIRED", "KR_LINK_INHIBIT_TIMEOUT",
                   "KR_LINK_PARTNER_DID_NOT_SET_RECEIVER_READY", "REMOTE_FAULT"});
    case ETHTOOL_LINK_EXT_STATE_LINK_LOGICAL_MISMATCH:
      return pick({"PCS_DID_NOT_ACQUIRE_BLOCK_LOCK", "PCS_DID_NOT_ACQUIRE_AM_LOCK",
                   "PCS_DID_NOT_GET_ALIGN_STATUS", "FC_FEC_IS_NOT_LOCKED", "RS_FEC_IS_NOT_LOCKED"});
    case ETHTOOL_LINK_EXT_STATE_BAD_SIGNAL_INTEGRITY:
      return pick({"LARGE_NUMBER_OF_PHYSICAL_ERRORS", "UNSUPPORTED_RATE",
                   "SERDES_REFERENCE_CLOCK_LOST", "SERDES_ALOS"});
    case ETHTOOL_LINK_EXT_STATE_CABLE_ISSUE:
      return pick({"UNSUPPORTED_CABLE", "CABLE_TEST_FAILURE"});
    case ETHTOOL_LINK_EXT_STATE_MODULE:
      return pick({"CMIS_NOT_READY"});
    default:
      return absl::StrCat("SUBSTATE_", substate);
  }
}

}  // namespace rocenet::os
