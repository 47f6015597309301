// SPDX-License-Identifier: Apache-2.0
// The test cluster's sandbox ("pause") program: PID 1 of every pod's
// sandbox. It holds the pod's namespaces open, reaps the processes it
// adopts, and exits on SIGINT or SIGTERM. Built static by tests/k8s/images.py.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void Stop(int signal_number) {
  (void)signal_number;
  _exit(0);
}

static void Reap(int signal_number) {
  (void)signal_number;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = Stop};
  struct sigaction reap = {.sa_handler = Reap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
      sigaction(SIGCHLD, &reap, NULL) < 0) {
    return 1;
  }
  for (;;) pause();
}
