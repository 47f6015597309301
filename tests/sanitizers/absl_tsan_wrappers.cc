// SPDX-License-Identifier: Apache-2.0
// ThreadSanitizer sees synchronization only in code it instrumented, and
// Debian's Abseil is not: absl::Mutex and absl::Notification would look like
// no synchronization at all, and every access they order would be reported as
// a race. The TSan test binary is linked with -Wl,--wrap=<symbol> for each
// function below (CMakeLists.txt), so rocenet's calls land here first and TSan
// is told what the call does: Unlock and Notify release, Lock and the waits
// acquire, on the object's address. Abseil's own code is left as it is.
//
// Only calls from rocenet's objects are wrapped; that is all TSan needs, since
// the accesses it checks are rocenet's.
#include <sanitizer/tsan_interface.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

// The mangled names of the Abseil members, as libabsl_synchronization.so
// exports them; each is called with the object as its first argument.
#define ROCENET_MUTEX_LOCK _ZN4absl7debian35Mutex4LockEv
#define ROCENET_MUTEX_UNLOCK _ZN4absl7debian35Mutex6UnlockEv
#define ROCENET_MUTEX_READER_LOCK _ZN4absl7debian35Mutex10ReaderLockEv
#define ROCENET_MUTEX_READER_UNLOCK _ZN4absl7debian35Mutex12ReaderUnlockEv
#define ROCENET_NOTIFY _ZN4absl7debian312Notification6NotifyEv
#define ROCENET_WAIT _ZNK4absl7debian312Notification19WaitForNotificationEv
#define ROCENET_WAIT_TIMEOUT \
  _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE
#define ROCENET_WAIT_DEADLINE \
  _ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE

#define ROCENET_CAT(a, b) a##b
#define REAL(name) ROCENET_CAT(__real_, name)
#define WRAP(name) ROCENET_CAT(__wrap_, name)

extern "C" {

void REAL(ROCENET_MUTEX_LOCK)(absl::Mutex* mu);
void REAL(ROCENET_MUTEX_UNLOCK)(absl::Mutex* mu);
void REAL(ROCENET_MUTEX_READER_LOCK)(absl::Mutex* mu);
void REAL(ROCENET_MUTEX_READER_UNLOCK)(absl::Mutex* mu);
void REAL(ROCENET_NOTIFY)(absl::Notification* n);
void REAL(ROCENET_WAIT)(const absl::Notification* n);
bool REAL(ROCENET_WAIT_TIMEOUT)(const absl::Notification* n, absl::Duration timeout);
bool REAL(ROCENET_WAIT_DEADLINE)(const absl::Notification* n, absl::Time deadline);

void WRAP(ROCENET_MUTEX_LOCK)(absl::Mutex* mu) {
  REAL(ROCENET_MUTEX_LOCK)(mu);
  __tsan_acquire(mu);
}

void WRAP(ROCENET_MUTEX_UNLOCK)(absl::Mutex* mu) {
  __tsan_release(mu);
  REAL(ROCENET_MUTEX_UNLOCK)(mu);
}

void WRAP(ROCENET_MUTEX_READER_LOCK)(absl::Mutex* mu) {
  REAL(ROCENET_MUTEX_READER_LOCK)(mu);
  __tsan_acquire(mu);
}

void WRAP(ROCENET_MUTEX_READER_UNLOCK)(absl::Mutex* mu) {
  __tsan_release(mu);
  REAL(ROCENET_MUTEX_READER_UNLOCK)(mu);
}

void WRAP(ROCENET_NOTIFY)(absl::Notification* n) {
  __tsan_release(n);
  REAL(ROCENET_NOTIFY)(n);
}

void WRAP(ROCENET_WAIT)(const absl::Notification* n) {
  REAL(ROCENET_WAIT)(n);
  __tsan_acquire(const_cast<absl::Notification*>(n));
}

bool WRAP(ROCENET_WAIT_TIMEOUT)(const absl::Notification* n, absl::Duration timeout) {
  const bool notified = REAL(ROCENET_WAIT_TIMEOUT)(n, timeout);
  if (notified) __tsan_acquire(const_cast<absl::Notification*>(n));
  return notified;
}

bool WRAP(ROCENET_WAIT_DEADLINE)(const absl::Notification* n, absl::Time deadline) {
  const bool notified = REAL(ROCENET_WAIT_DEADLINE)(n, deadline);
  if (notified) __tsan_acquire(const_cast<absl::Notification*>(n));
  return notified;
}

}  // extern "C"
