// The whole of rocectl behind one function: main() calls it with the real
// argv and streams, tests call it with their own.
//
// Parses the command line, picks the command, runs it and turns the result
// into an exit code (exit_code.h). Results go to `out`, errors to `err` as
// "rocectl: <message>". Uses the process-global absl flags, so run one
// invocation at a time.
#pragma once

#include <ostream>

namespace rocenet::rocectl {

int RunRocectl(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace rocenet::rocectl
