// SPDX-License-Identifier: Apache-2.0
// rocenet: the CNI plugin of rocenetd. Container runtimes (through Multus)
// run it once per attachment; everything happens in Dispatch() (dispatch.h).
#include <cstdlib>
#include <iostream>
#include <memory>

#include "plugins/cni/daemon_client.h"
#include "plugins/cni/dispatch.h"

extern char** environ;

int main() {
  // The invocation's connection to rocenetd stays open until the process
  // ends: see ConnectKeepingOpen.
  std::unique_ptr<rocenet::cni::AttachmentsClient> connection;
  const int code =
      rocenet::cni::Dispatch(rocenet::cni::EnvironmentFrom(environ), std::cin, std::cout, std::cerr,
                             rocenet::cni::ConnectKeepingOpen(&connection));
  std::cout.flush();
  std::_Exit(code);
}
