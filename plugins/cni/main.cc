// SPDX-License-Identifier: Apache-2.0
// rocenet: the CNI plugin of rocenetd. Container runtimes (through Multus)
// run it once per attachment; everything happens in Run() (dispatch.h).
#include <iostream>

#include "plugins/cni/dispatch.h"

extern char** environ;

int main() {
  return rocenet::cni::Run(rocenet::cni::EnvironmentFrom(environ), std::cin, std::cout, std::cerr);
}
