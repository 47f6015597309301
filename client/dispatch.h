// SPDX-License-Identifier: Apache-2.0
// The whole of rocectl behind one function: main() calls it with the real
// argv and streams, tests call it with their own.
//
// Parses the command line, picks the command, runs it and turns the result
// into an exit code (exit_code.h). Results go to `out`, errors to `err` as
// "rocectl <command and its arguments>: <message>" ("rocectl: <message>"
// for usage errors). Uses the process-global absl flags, so run one
// invocation at a time.
#pragma once

#include <istream>
#include <ostream>

namespace rocenet::rocectl {

int RunRocectl(int argc, char** argv, std::ostream& out, std::ostream& err);

// The same, told whether `err` is a terminal: long waits then rewrite their
// progress line in place instead of printing a line per change.
int RunRocectl(int argc, char** argv, std::ostream& out, std::ostream& err, bool err_is_terminal);

// The same with the input a command reads for "-" (main passes std::cin).
int RunRocectl(int argc, char** argv, std::istream* in, std::ostream& out, std::ostream& err,
               bool err_is_terminal);

}  // namespace rocenet::rocectl
