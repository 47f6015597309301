# SPDX-License-Identifier: Apache-2.0
# Sanitizer builds.
#
#   -DROCENET_SANITIZE=address,undefined   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DROCENET_SANITIZE=thread              ThreadSanitizer
#
# The flags apply to every target of the tree (libraries, binaries, tests), so
# the daemon, the plugins and rocectl that the integration tests run are
# instrumented too. Undefined behaviour is fatal (-fno-sanitize-recover), so a
# finding fails the test that triggered it; ASan's own options (halt_on_error,
# leak checking) come from ASAN_OPTIONS at run time (see the Makefile's
# test-sanitize). The system libraries (gRPC, Protobuf, Abseil, libnl) are not
# instrumented: ASan and UBSan do not need them to be, TSan does (see
# tests/sanitizers/tsan.supp).
set(ROCENET_SANITIZE "" CACHE STRING
    "Build with sanitizers: empty, 'address,undefined' or 'thread'")
set_property(CACHE ROCENET_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

if(ROCENET_SANITIZE)
  string(REPLACE "," ";" rocenet_sanitizers "${ROCENET_SANITIZE}")
  foreach(s ${rocenet_sanitizers})
    if(NOT s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "ROCENET_SANITIZE: unknown sanitizer '${s}' (address, undefined, thread)")
    endif()
  endforeach()
  if("thread" IN_LIST rocenet_sanitizers AND "address" IN_LIST rocenet_sanitizers)
    message(FATAL_ERROR "ROCENET_SANITIZE: thread cannot be combined with address")
  endif()
  set(rocenet_sanitize_flags -fsanitize=${ROCENET_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST rocenet_sanitizers)
    list(APPEND rocenet_sanitize_flags -fno-sanitize-recover=all)
  endif()
  add_compile_options(${rocenet_sanitize_flags})
  # GCC's flow analysis sees through the sanitizers' instrumentation poorly
  # and warns of uninitialized members inside libstdc++ (<regex>'s
  # std::function states) that the plain build compiles cleanly; with
  # -Werror that would fail the build over no bug of ours. The plain build
  # keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  add_link_options(${rocenet_sanitize_flags})
  # The sanitizer runtimes cannot be linked into a fully static binary.
  set(ROCENET_CNI_STATIC OFF CACHE BOOL "Link the rocenet CNI plugin binary fully static" FORCE)
  message(STATUS "rocenet: sanitizers ${ROCENET_SANITIZE}")
endif()
