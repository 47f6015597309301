// SPDX-License-Identifier: Apache-2.0
// rocenetd: the rocenet node daemon.
#include "daemon/server/daemon_main.h"

int main(int argc, char** argv) { return rocenet::server::RocenetdMain(argc, argv); }
