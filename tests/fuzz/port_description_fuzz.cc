// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Port Description parser. Built and run by
// `tests/fuzz/run.sh port_description`.
//
// Beyond "never crash, no undefined behaviour" (ASan, UBSan), it checks the
// parser's contract on every input and aborts on the first violation:
//   - a refusal carries a DescriptionError and a printable ASCII message that
//     stays short whatever the input;
//   - what parses renders with ToString() and parses back to the same value,
//     also with free text in front of it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "daemon/addressing/port_description.h"

namespace rocenet::addressing {
namespace {

// Messages quote at most 64 bytes of input, escaped to at most four
// characters a byte, and at most twice; longer means a quote was not cut.
constexpr size_t kMaxMessageBytes = 1024;

[[noreturn]] void Fail(const char* what, absl::string_view detail = "") {
  std::fprintf(stderr, "port_description_fuzz: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void CheckRefusal(const absl::Status& status) {
  if (!DescriptionErrorOf(status).has_value()) Fail("refusal without a reason:", status.message());
  if (status.code() != absl::StatusCode::kInvalidArgument) Fail("refusal not InvalidArgument");
  const absl::string_view message = status.message();
  if (message.empty()) Fail("refusal without a message");
  if (message.size() > kMaxMessageBytes) Fail("message too long:", message);
  for (char c : message) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) Fail("unprintable message");
  }
}

void CheckRoundTrip(const SwitchAddress& parsed) {
  const std::string text = parsed.peer.ToString();
  for (const std::string& description : {text, "no-alert " + text, "x\t" + text + " \r\n"}) {
    absl::StatusOr<SwitchAddress> again = ParsePortDescription(description);
    if (!again.ok()) Fail("rendered peer does not parse:", again.status().message());
    if (!(*again == parsed)) Fail("Parse(ToString(x)) != x:", text);
  }
}

}  // namespace
}  // namespace rocenet::addressing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<rocenet::addressing::SwitchAddress> parsed =
      rocenet::addressing::ParsePortDescription(input);
  if (parsed.ok()) {
    rocenet::addressing::CheckRoundTrip(*parsed);
  } else {
    rocenet::addressing::CheckRefusal(parsed.status());
  }
  return 0;
}
