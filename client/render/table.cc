// SPDX-License-Identifier: Apache-2.0
#include "client/render/table.h"

#include <algorithm>
#include <utility>

namespace rocenet::rocectl {
namespace {

constexpr size_t kGap = 3;

// Code points: every byte that is not a UTF-8 continuation byte.
size_t Width(const std::string& text) {
  size_t width = 0;
  for (char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

// A newline or tab from a switch's System Description would break the row.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

void AppendLine(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
                std::string* out) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) line.append(widths[i] - Width(cells[i]) + kGap, ' ');
  }
  // Empty trailing cells would otherwise leave padding at the end.
  line.erase(line.find_last_not_of(' ') + 1);
  *out += line;
  *out += '\n';
}

}  // namespace

TextTable::TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& cell : cells) cell = OneLine(std::move(cell));
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) widths[i] = Width(headers_[i]);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  std::string out;
  AppendLine(headers_, widths, &out);
  for (const auto& row : rows_) AppendLine(row, widths, &out);
  return out;
}

}  // namespace rocenet::rocectl
