# SPDX-License-Identifier: Apache-2.0
# Helpers that give every rocenet target the same warnings and layout.
#
#   rocenet_library(NAME <name> SOURCES ... DEPS ...)
#     defines the static library rocenet_<name> with the alias rocenet::<name>.
#     DEPS are PUBLIC: a target may use only what it declares, which is how the
#     one-way dependency order of the daemon (common <- os <- domain <- api <-
#     server) is enforced by the build.
#   rocenet_test(NAME <name> SOURCES ... DEPS ...)
#     a GoogleTest binary registered with CTest.

set(ROCENET_WARNINGS -Wall -Wextra -Werror=unused-result -Wno-unused-parameter)
option(ROCENET_WERROR "Treat every warning as an error" ON)
if(ROCENET_WERROR)
  list(APPEND ROCENET_WARNINGS -Werror)
endif()

function(rocenet_apply_warnings target)
  target_compile_options(${target} PRIVATE ${ROCENET_WARNINGS})
endfunction()

function(rocenet_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_library(rocenet_${ARG_NAME} STATIC ${ARG_SOURCES})
  add_library(rocenet::${ARG_NAME} ALIAS rocenet_${ARG_NAME})
  target_include_directories(rocenet_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(rocenet_${ARG_NAME} PUBLIC ${ARG_DEPS})
  rocenet_apply_warnings(rocenet_${ARG_NAME})
endfunction()

function(rocenet_binary)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  rocenet_apply_warnings(${ARG_NAME})
endfunction()

# With ROCENET_UNIT_TESTS off the GoogleTest binaries are still defined but
# neither built by default nor registered with CTest: `make test` runs them
# once, in the ASan+UBSan tree, and builds the plain tree without them.
option(ROCENET_UNIT_TESTS "Build the unit tests and register them with CTest" ON)

include(GoogleTest)
function(rocenet_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  if(ROCENET_UNIT_TESTS)
    add_executable(${ARG_NAME} ${ARG_SOURCES})
  else()
    add_executable(${ARG_NAME} EXCLUDE_FROM_ALL ${ARG_SOURCES})
  endif()
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} rocenet::test_support GTest::gmock GTest::gtest_main)
  rocenet_apply_warnings(${ARG_NAME})
  # The test code itself is built at -O1 in the optimised builds: a third
  # less compile time than -O2, and the code under test (the libraries) is
  # still built as shipped. In the sanitizer builds it is built at -O0,
  # which compiles two fifths faster than -O1 under instrumentation; the
  # libraries there keep -O1, so the daemons the integration tests start
  # stay quick.
  if(ROCENET_SANITIZE)
    target_compile_options(${ARG_NAME} PRIVATE -O0)
  else()
    target_compile_options(${ARG_NAME} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endif()
  if(ROCENET_UNIT_TESTS)
    gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 30 PROPERTIES LABELS unit)
  endif()
endfunction()

# add_subdirectory() for every direct child directory that has a CMakeLists.txt,
# so a new module or test directory needs no edit of its parent.
function(rocenet_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${child}
       AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
