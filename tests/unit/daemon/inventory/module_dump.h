// SPDX-License-Identifier: Apache-2.0
// Transceiver EEPROM bytes from the dumps in tests/fixtures/modules: a line
// of 16 hex bytes each, its offset within the page first; "#" starts a
// comment line; "??" is a byte the source did not show (read as 0, and no
// test reads it). A file is one 128-byte half page, or a whole module with
// each half page under a header: [lower], [00h], [01h], ... [11h].
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/inventory/module_eeprom.h"
#include "gtest/gtest.h"

namespace rocenet::inventory {

inline std::string FixturePath(const std::string& name) {
  return absl::StrCat(ROCENET_FIXTURE_DIR, "/modules/", name);
}

// The dump's half pages by section ("" for a file without headers), each
// 128 bytes, lines not listed zero.
inline std::map<std::string, std::string> ReadDump(const std::string& name) {
  std::ifstream in(FixturePath(name));
  EXPECT_TRUE(in.good()) << "no fixture " << FixturePath(name);
  std::map<std::string, std::string> out;
  std::string section;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    std::istringstream fields(line);
    std::string offset_text;
    fields >> offset_text;
    uint32_t offset = 0;
    EXPECT_TRUE(absl::SimpleHexAtoi(offset_text, &offset)) << line;
    std::string& half = out[section];
    half.resize(128, '\0');
    const uint32_t start = offset % 128;
    for (uint32_t i = 0; i < 16; ++i) {
      std::string byte;
      fields >> byte;
      uint32_t value = 0;
      if (byte != "??") {
        EXPECT_TRUE(absl::SimpleHexAtoi(byte, &value)) << line;
      }
      if (start + i < 128) half[start + i] = static_cast<char>(value);
    }
  }
  return out;
}

// A file of one half page.
inline std::string HalfPageFromDump(const std::string& name) { return ReadDump(name)[""]; }

// A whole module's pages, from a file with sections.
inline ModulePages ModuleFromDump(const std::string& name) {
  ModulePages pages;
  for (const auto& [section, bytes] : ReadDump(name)) {
    if (section == "lower") {
      pages.lower = bytes;
      continue;
    }
    uint32_t page = 0;
    EXPECT_TRUE(absl::SimpleHexAtoi(section.substr(0, section.size() - 1), &page)) << section;
    pages.upper[{static_cast<int>(page), 0}] = bytes;
  }
  return pages;
}

}  // namespace rocenet::inventory
