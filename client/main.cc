// SPDX-License-Identifier: Apache-2.0
// rocectl: the admin CLI of rocenetd. Everything happens in RunRocectl(); the
// flags it reads are defined next to this file, in flags.cc.
#include <unistd.h>

#include <iostream>

#include "client/dispatch.h"

int main(int argc, char** argv) {
  return rocenet::rocectl::RunRocectl(argc, argv, &std::cin, std::cout, std::cerr,
                                      isatty(STDERR_FILENO) == 1);
}
