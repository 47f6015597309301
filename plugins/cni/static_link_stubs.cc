// SPDX-License-Identifier: Apache-2.0
// Stand-ins for glibc's name-service lookups, linked into the fully static
// rocenet binary only (see CMakeLists.txt).
//
// gRPC and c-ares register DNS resolvers whether or not they are used, and
// in a static binary glibc's getaddrinfo() and getservby*() would need the
// host's NSS modules of exactly the glibc that built the binary. The plugin
// never resolves a name: it dials rocenetd's unix socket. The linker routes
// the calls here (--wrap), so glibc's versions are not linked in, and a
// lookup, should one ever happen, fails cleanly instead of loading NSS.
#include <netdb.h>

#include <cerrno>
#include <cstddef>

extern "C" {

int __wrap_getaddrinfo(const char*, const char*, const struct addrinfo*, struct addrinfo** result) {
  if (result != nullptr) *result = nullptr;
  return EAI_FAIL;
}

void __wrap_freeaddrinfo(struct addrinfo*) {}

struct servent* __wrap_getservbyname(const char*, const char*) {
  return nullptr;
}

int __wrap_getservbyport_r(int, const char*, struct servent*, char*, size_t,
                           struct servent** result) {
  if (result != nullptr) *result = nullptr;
  return ENOENT;
}

}  // extern "C"
