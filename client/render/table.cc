#include "client/render/table.h"

#include <algorithm>
#include <utility>

namespace rocenet::rocectl {
namespace {

constexpr size_t kGap = 3;

void AppendLine(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
                std::string* out) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) line.append(widths[i] - cells[i].size() + kGap, ' ');
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
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) widths[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  AppendLine(headers_, widths, &out);
  for (const auto& row : rows_) AppendLine(row, widths, &out);
  return out;
}

}  // namespace rocenet::rocectl
