// A plain-text table with left-aligned columns, in the style of kubectl get.
//
// Pure: collects rows and returns the text, no I/O. Thread-compatible.
// Widths count bytes, which is right for the ASCII that ports, ids and
// condition names are made of.
#pragma once

#include <string>
#include <vector>

namespace rocenet::rocectl {

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
