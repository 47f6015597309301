// SPDX-License-Identifier: Apache-2.0
// Bytes from the wire made safe for proto3 strings and Prometheus labels.
//
// LLDP strings (names, descriptions) may hold any bytes, but a proto3 string
// field that is not valid UTF-8 fails to parse on the client (the whole
// response is lost) and Prometheus rejects a scrape with an invalid label
// value. Pure functions, thread-safe.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace rocenet::api {

// `bytes` with every ill-formed sequence replaced by U+FFFD, one per maximal
// subpart as Unicode (3.9, "U+FFFD Substitution of Maximal Subparts") and
// the WHATWG decoder do it. Valid UTF-8 (and so plain ASCII) comes back
// unchanged; overlong forms, surrogates and code points above U+10FFFF are
// ill-formed.
std::string ValidUtf8(absl::string_view bytes);

}  // namespace rocenet::api
