// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the LLDP decoder. Built and run by tests/fuzz/run.sh.
//
// Beyond "never crash, never leak, no undefined behaviour" (ASan, UBSan), it
// checks the decoder's contract on every input, as a frame and as a bare
// LLDPDU, and aborts on the first violation:
//   - a refusal always carries a DecodeError;
//   - what is kept stays within the kMax*Kept caps;
//   - whatever decodes also encodes, and decodes again to the same data.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/lldp/codec.h"

namespace rocenet::lldp {
namespace {

[[noreturn]] void Fail(const char* what, absl::string_view detail = "") {
  std::fprintf(stderr, "lldp_decode_fuzz: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void CheckCaps(const Lldpdu& d) {
  if (d.port_descriptions.size() > kMaxStringTlvsKept ||
      d.system_names.size() > kMaxStringTlvsKept ||
      d.system_descriptions.size() > kMaxStringTlvsKept ||
      d.management_addresses.size() > kMaxManagementAddressesKept ||
      d.org_tlvs.size() > kMaxOrgTlvsKept) {
    Fail("kept more TLVs than the caps allow");
  }
}

// The printable forms run on wire data too; make sure they cope with any.
void Print(const Lldpdu& d) {
  size_t total = d.chassis_id.ToString().size() + d.port_id.ToString().size();
  for (const ManagementAddress& m : d.management_addresses) total += m.AddressToString().size();
  if (total == 0) Fail("empty printable ID");
}

void CheckRoundTrip(const Lldpdu& d) {
  absl::StatusOr<std::string> bytes = EncodeLldpdu(d);
  if (!bytes.ok()) Fail("decoded LLDPDU does not encode:", bytes.status().message());
  absl::StatusOr<Lldpdu> again = DecodeLldpdu(*bytes);
  if (!again.ok()) Fail("encoded LLDPDU does not decode:", again.status().message());

  // Encode() drops what was discarded or unrecognized, so those statistics
  // start over; everything else must be identical.
  Lldpdu expected = d;
  expected.unrecognized_tlvs = 0;
  expected.unrecognized_org_tlvs = static_cast<uint32_t>(d.org_tlvs.size());
  expected.discarded_tlvs = {};
  if (!(*again == expected)) Fail("Decode(Encode(x)) != x");

  // And the encoding is canonical.
  absl::StatusOr<std::string> bytes_again = EncodeLldpdu(*again);
  if (!bytes_again.ok() || *bytes_again != *bytes) Fail("Encode is not canonical");

  absl::StatusOr<std::string> frame = Encode(d, MacAddress());
  if (!frame.ok()) Fail("Encode of a frame failed:", frame.status().message());
  absl::StatusOr<Lldpdu> from_frame = Decode(*frame);
  if (!from_frame.ok() || !(*from_frame == expected)) Fail("frame round trip differs");
}

void Check(const absl::StatusOr<Lldpdu>& decoded) {
  if (!decoded.ok()) {
    if (!DecodeErrorOf(decoded.status()).has_value()) {
      Fail("refusal without a reason:", decoded.status().message());
    }
    return;
  }
  CheckCaps(*decoded);
  Print(*decoded);
  CheckRoundTrip(*decoded);
}

}  // namespace
}  // namespace rocenet::lldp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  rocenet::lldp::Check(rocenet::lldp::Decode(input));
  rocenet::lldp::Check(rocenet::lldp::DecodeLldpdu(input));
  return 0;
}
