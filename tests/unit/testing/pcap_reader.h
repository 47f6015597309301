// SPDX-License-Identifier: Apache-2.0
// A reader for classic libpcap capture files, for tests that replay captured
// frames (tests/fixtures/*/*.pcap).
//
// Test-only. Pure functions apart from ReadPcapFile(), which reads one file;
// thread-safe. Understands both byte orders and both the microsecond and the
// nanosecond variants of the format; pcapng is refused (Unimplemented), as is
// any record whose length runs past the end of the file (DataLoss).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::testutil {

inline constexpr uint32_t kLinkTypeEthernet = 1;

struct PcapRecord {
  int64_t timestamp_ns = 0;
  uint32_t original_length = 0;  // on the wire; data may be shorter (snaplen)
  std::string data;
};

struct PcapFile {
  uint32_t link_type = 0;
  uint32_t snap_length = 0;
  std::vector<PcapRecord> records;
};

// Parses the bytes of a whole capture file.
absl::StatusOr<PcapFile> ParsePcap(absl::string_view bytes);

// Reads and parses the capture file at `path`.
absl::StatusOr<PcapFile> ReadPcapFile(const std::string& path);

// The frames of an Ethernet capture, in order; an error if the file is not an
// Ethernet capture or holds a frame cut short by the snap length.
absl::StatusOr<std::vector<std::string>> ReadEthernetFrames(const std::string& path);

}  // namespace rocenet::testutil
