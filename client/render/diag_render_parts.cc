// SPDX-License-Identifier: Apache-2.0
#include "client/render/diag_render_parts.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/render/table.h"

namespace rocenet::rocectl::diag_render {

std::string Endpoint(const std::string& node, const std::string& port) {
  if (node.empty()) return port;
  return absl::StrCat(node, "/", port);
}

std::string StageLine(const v1::StagePath& stage) {
  if (stage.stage().empty()) return "";
  return absl::StrCat("stage ", stage.stage(), ": ", stage.path(), "\n");
}

void AppendNotes(const v1::StagePath& stage, std::string* out) {
  if (stage.notes().empty()) return;
  absl::StrAppend(out, "\nNotes:\n");
  for (const std::string& note : stage.notes()) absl::StrAppend(out, "  ", note, "\n");
}

void AppendProblems(const google::protobuf::RepeatedPtrField<std::string>& problems,
                    std::string* out) {
  if (problems.empty()) return;
  absl::StrAppend(out, "\nProblems:\n");
  for (const std::string& p : problems) absl::StrAppend(out, "  ", p, "\n");
}

void AppendCounters(const v1::RunCounters& counters, std::string* out) {
  const uint32_t read = counters.nodes_read();
  if (read > 0 && counters.changes().empty()) {
    absl::StrAppend(out, "\nCounters: none moved during the run (", read, " node",
                    read == 1 ? "" : "s", " read)\n");
  } else if (!counters.changes().empty()) {
    absl::StrAppend(out, "\nCounters that moved during the run (", read, " node",
                    read == 1 ? "" : "s", " read):\n");
    TextTable table({"NODE", "PORT", "COUNTER", "INCREASE"});
    int rows = 0;
    for (const v1::CounterChange& c : counters.changes()) {
      if (rows++ == kCounterRows) break;
      table.AddRow({c.node(), c.port(), c.counter(),
                    c.reset() ? absl::StrCat(c.increase(), " (reset during the run)")
                              : absl::StrCat(c.increase())});
    }
    absl::StrAppend(out, table.Render());
    if (counters.changes_size() > kCounterRows) {
      absl::StrAppend(out, "... and ", counters.changes_size() - kCounterRows,
                      " more (-o json lists them all)\n");
    }
  }
  int shown = 0;
  for (const std::string& unread : counters.unread()) {
    if (shown++ == kUnreadRows) {
      absl::StrAppend(out, "Counters not read on ", counters.unread_size() - kUnreadRows,
                      " more node", counters.unread_size() - kUnreadRows == 1 ? "" : "s",
                      " (-o json lists them all)\n");
      break;
    }
    absl::StrAppend(out, "Counters not read: ", unread, "\n");
  }
}

void AppendLabels(const v1::Labels& labels, absl::string_view stage, std::string* out) {
  if (labels.inconclusive()) {
    absl::StrAppend(out, "\nLabels: inconclusive, ", labels.reason(), "\n");
  } else if (!labels.unvalidated().empty()) {
    absl::StrAppend(out, "\nLabels: validation removed from ",
                    absl::StrJoin(labels.unvalidated(), ", "), "\n");
  } else if (labels.validated() > 0) {
    absl::StrAppend(out, "\nLabels: ", stage, " validated on ", labels.validated(), " node",
                    labels.validated() == 1 ? "" : "s", "\n");
  }
}

}  // namespace rocenet::rocectl::diag_render
