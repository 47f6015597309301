// SPDX-License-Identifier: Apache-2.0
// Decoding of the optional TLVs: everything after Chassis ID, Port ID and TTL.
//
// Internal to daemon/lldp: called by DecodeLldpdu() once the LLDPDU's framing
// and mandatory TLVs are known to be sound. Never fails as a whole: a TLV that
// breaks its type's rules is dropped and counted in Lldpdu::discarded_tlvs
// (802.1AB receive validation), a TLV of a reserved type is counted in
// Lldpdu::unrecognized_tlvs. Pure function, thread-safe.
#pragma once

#include "daemon/lldp/lldpdu.h"
#include "daemon/lldp/tlv_reader.h"

namespace rocenet::lldp {

// Adds what `tlv` carries to `out`, or counts why it could not.
void DecodeOptionalTlv(const Tlv& tlv, Lldpdu* out);

}  // namespace rocenet::lldp
