// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/dcb_message.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace rocenet::os {
namespace {

static_assert(sizeof(ieee_pfc) == 136, "struct ieee_pfc as the kernel lays it out");
static_assert(IEEE_8021QAZ_MAX_TCS == kPfcPriorities);

void PutAttribute(std::string& message, uint16_t type, const void* data, size_t length) {
  nlattr header{.nla_len = static_cast<uint16_t>(NLA_HDRLEN + length), .nla_type = type};
  const size_t at = message.size();
  message.resize(at + NLA_ALIGN(header.nla_len), '\0');
  std::memcpy(message.data() + at, &header, sizeof(header));
  if (length > 0) std::memcpy(message.data() + at + NLA_HDRLEN, data, length);
}

// A request of `type` for `command` on `ifname`, with `attributes` (already
// encoded) after DCB_ATTR_IFNAME.
std::string Request(uint16_t type, uint8_t command, absl::string_view ifname, uint32_t seq,
                    const std::string& attributes = {}) {
  std::string message(NLMSG_HDRLEN, '\0');
  dcbmsg body{.dcb_family = AF_UNSPEC, .cmd = command, .dcb_pad = 0};
  message.append(reinterpret_cast<const char*>(&body), sizeof(body));
  message.resize(NLMSG_ALIGN(message.size()), '\0');
  const std::string name(ifname);
  PutAttribute(message, DCB_ATTR_IFNAME, name.c_str(), name.size() + 1);
  message += attributes;
  nlmsghdr header{.nlmsg_len = static_cast<uint32_t>(message.size()),
                  .nlmsg_type = type,
                  .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
                  .nlmsg_seq = seq,
                  .nlmsg_pid = 0};
  std::memcpy(message.data(), &header, sizeof(header));
  return message;
}

template <typename Fn>
void ForEachAttribute(absl::string_view data, Fn fn) {
  size_t at = 0;
  while (at + NLA_HDRLEN <= data.size()) {
    nlattr header;
    std::memcpy(&header, data.data() + at, sizeof(header));
    if (header.nla_len < NLA_HDRLEN || at + header.nla_len > data.size()) return;
    fn(static_cast<uint16_t>(header.nla_type & NLA_TYPE_MASK),
       data.substr(at + NLA_HDRLEN, header.nla_len - NLA_HDRLEN));
    at += NLA_ALIGN(header.nla_len);
  }
}

PfcSettings FromKernel(const ieee_pfc& pfc) {
  PfcSettings out;
  out.capability = pfc.pfc_cap;
  out.enabled = pfc.pfc_en;
  for (int i = 0; i < kPfcPriorities; ++i) {
    out.requests[i] = pfc.requests[i];
    out.indications[i] = pfc.indications[i];
  }
  return out;
}

}  // namespace

uint8_t HostIeeeDcbxMode() { return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE; }

std::string BuildIeeeGet(absl::string_view ifname, uint32_t seq) {
  return Request(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname, seq);
}

std::string BuildIeeeSetPfc(absl::string_view ifname, const PfcSettings& pfc, uint32_t seq) {
  ieee_pfc kernel;
  std::memset(&kernel, 0, sizeof(kernel));
  kernel.pfc_cap = pfc.capability;
  kernel.pfc_en = pfc.enabled;
  std::string nested;
  PutAttribute(nested, DCB_ATTR_IEEE_PFC, &kernel, sizeof(kernel));
  std::string attributes;
  PutAttribute(attributes, DCB_ATTR_IEEE | NLA_F_NESTED, nested.data(), nested.size());
  return Request(RTM_SETDCB, DCB_CMD_IEEE_SET, ifname, seq, attributes);
}

std::string BuildGetDcbx(absl::string_view ifname, uint32_t seq) {
  return Request(RTM_GETDCB, DCB_CMD_GDCBX, ifname, seq);
}

std::string BuildSetDcbx(absl::string_view ifname, uint8_t mode, uint32_t seq) {
  std::string attributes;
  PutAttribute(attributes, DCB_ATTR_DCBX, &mode, sizeof(mode));
  return Request(RTM_SETDCB, DCB_CMD_SDCBX, ifname, seq, attributes);
}

absl::StatusOr<DcbReply> ParseDcbMessage(absl::string_view bytes, size_t* length) {
  nlmsghdr header;
  if (bytes.size() < sizeof(header)) {
    return absl::InvalidArgumentError("dcbnl: message shorter than its header");
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("dcbnl: message length ", header.nlmsg_len,
                                                   " does not fit the ", bytes.size(),
                                                   " bytes received"));
  }
  *length = std::min<size_t>(NLMSG_ALIGN(header.nlmsg_len), bytes.size());
  const absl::string_view payload = bytes.substr(NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
  DcbReply reply;
  reply.type = header.nlmsg_type;
  if (header.nlmsg_type == NLMSG_ERROR) {
    nlmsgerr error;
    if (payload.size() < sizeof(error.error)) {
      return absl::InvalidArgumentError("dcbnl: short error message");
    }
    std::memcpy(&error.error, payload.data(), sizeof(error.error));
    reply.error = -error.error;
    return reply;
  }
  if (header.nlmsg_type != RTM_GETDCB && header.nlmsg_type != RTM_SETDCB) return reply;
  if (payload.size() < sizeof(dcbmsg)) {
    return absl::InvalidArgumentError("dcbnl: reply shorter than struct dcbmsg");
  }
  dcbmsg body;
  std::memcpy(&body, payload.data(), sizeof(body));
  reply.command = body.cmd;
  const absl::string_view attributes =
      payload.substr(std::min<size_t>(NLMSG_ALIGN(sizeof(body)), payload.size()));
  absl::Status bad;
  ForEachAttribute(attributes, [&](uint16_t type, absl::string_view value) {
    if (type == DCB_ATTR_DCBX && !value.empty()) {
      reply.dcbx = static_cast<uint8_t>(value[0]);
    } else if (type == DCB_ATTR_IEEE && body.cmd == DCB_CMD_IEEE_SET && !value.empty()) {
      reply.set_result = static_cast<uint8_t>(value[0]);
    } else if (type == DCB_ATTR_IEEE && body.cmd == DCB_CMD_IEEE_GET) {
      ForEachAttribute(value, [&](uint16_t inner, absl::string_view data) {
        if (inner != DCB_ATTR_IEEE_PFC) return;
        if (data.size() < sizeof(ieee_pfc)) {
          bad = absl::InvalidArgumentError(absl::StrCat("dcbnl: DCB_ATTR_IEEE_PFC of ", data.size(),
                                                        " bytes, not ", sizeof(ieee_pfc)));
          return;
        }
        ieee_pfc pfc;
        std::memcpy(&pfc, data.data(), sizeof(pfc));
        reply.pfc = FromKernel(pfc);
      });
    }
  });
  if (!bad.ok()) return bad;
  return reply;
}

int SetResultErrno(uint8_t result) { return result == 0 ? 0 : 256 - result; }

}  // namespace rocenet::os
