# SPDX-License-Identifier: Apache-2.0
# What makes a build fast without changing what it builds: a compiler cache
# when one is installed, and the fastest linker installed. (Unity builds,
# CMAKE_UNITY_BUILD, are the caller's choice: the Makefile's sanitizer trees
# use them, the plain tree compiles every source on its own.)
#
#   -DROCENET_CCACHE=OFF       do not use ccache even when it is installed
#   -DROCENET_LINKER=<name>    mold, lld or bfd; `auto` (the default) takes
#                              mold, then lld, then the compiler's own
#
# Neither is required: without ccache every object is compiled, without
# mold or lld the system linker links. packaging/debian-deps.sh installs mold
# (links of the sanitizer tree's test binaries take a fraction of ld.bfd's
# time); ccache is the developer's choice.

option(ROCENET_CCACHE "Use ccache when it is installed" ON)
if(ROCENET_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(ROCENET_CCACHE_PROGRAM ccache)
  if(ROCENET_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${ROCENET_CCACHE_PROGRAM})
    message(STATUS "rocenet: compiling through ${ROCENET_CCACHE_PROGRAM}")
  endif()
endif()

set(ROCENET_LINKER "auto" CACHE STRING "The linker: auto, mold, lld or bfd")
set_property(CACHE ROCENET_LINKER PROPERTY STRINGS auto mold lld bfd)
set(rocenet_linker "${ROCENET_LINKER}")
if(rocenet_linker STREQUAL "auto")
  set(rocenet_linker "")
  foreach(candidate mold lld)
    find_program(ROCENET_LD_${candidate} ld.${candidate})
    if(ROCENET_LD_${candidate})
      set(rocenet_linker ${candidate})
      break()
    endif()
  endforeach()
elseif(NOT rocenet_linker MATCHES "^(mold|lld|bfd)$")
  message(FATAL_ERROR "ROCENET_LINKER: unknown linker '${ROCENET_LINKER}' (auto, mold, lld, bfd)")
endif()
if(rocenet_linker)
  add_link_options(-fuse-ld=${rocenet_linker})
  message(STATUS "rocenet: linking with ${rocenet_linker}")
endif()
