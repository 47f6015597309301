// SPDX-License-Identifier: Apache-2.0
// A plain-text table with left-aligned columns, in the style of kubectl get.
//
// Pure: collects rows and returns the text, no I/O. Thread-compatible.
// Widths count UTF-8 code points, so text from the wire (LLDP names, which
// rocenetd hands out as valid UTF-8) stays aligned as long as each character
// takes one column; control characters in a cell are shown as spaces so a
// cell never breaks its line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocenet::rocectl {

// The cell for a value that may be empty: the value, or "-".
inline std::string OrDash(const std::string& value) { return value.empty() ? "-" : value; }
// The cell for an index that may be unknown (negative): the index, or "-".
inline std::string IndexOrDash(int64_t value) { return value < 0 ? "-" : std::to_string(value); }

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers);

  // A row with fewer cells than headers is padded with empty cells; extra
  // cells are dropped, so a caller bug cannot shift columns.
  void AddRow(std::vector<std::string> cells);

  // Header line, then one line per row, each ending in '\n'. Columns are
  // separated by three spaces; no line has trailing spaces.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rocenet::rocectl
