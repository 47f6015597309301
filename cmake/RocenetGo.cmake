# SPDX-License-Identifier: Apache-2.0
# The Go programs share one Go module, go.mod at the top of the tree: the
# node side's in plugins/ (dra/, the DRA kubelet plugin; reporter/, the node
# reporter; internal/, rocenetd's API as generated Go, committed, and the
# follower of its node stream), the cluster side's in operator/ (its API,
# rocenet-controller and kubectl-rocenet), and internal/ what both share.
# `go build` makes each program from go.mod's pinned modules (through the
# Go module proxy, into GOMODCACHE; `make` points that and GOCACHE at
# $ROCENET_CACHE/go); `go_test` runs gofmt, go vet and the module's tests,
# which check the generated code is fresh.
option(ROCENET_GO "Build the Go programs (go.mod) and their tests" ON)
if(ROCENET_GO)
  find_program(ROCENET_GO_EXECUTABLE go HINTS /usr/local/go/bin)
  if(NOT ROCENET_GO_EXECUTABLE)
    message(WARNING "go not found: the Go programs are not built (install Go 1.26, or -DROCENET_GO=OFF)")
    set(ROCENET_GO OFF)
  endif()
endif()

if(ROCENET_GO)
  set(ROCENET_GO_ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly)
  set(rocenet_go_sources ${PROJECT_SOURCE_DIR}/go.mod ${PROJECT_SOURCE_DIR}/go.sum)
  foreach(dir plugins operator internal)
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.go)
    list(APPEND rocenet_go_sources ${sources})
  endforeach()
  set_property(GLOBAL PROPERTY ROCENET_GO_SOURCES ${rocenet_go_sources})

  # rocenet_go_program(NAME PACKAGE [NO_INSTALL]): the program NAME, built
  # from PACKAGE (relative to the top of the tree) into go/ of the build
  # directory when any Go source of the module changes, installed to bin
  # (the DEB) unless NO_INSTALL (a program that runs only in the container
  # image, which builds it itself); its path in the global property
  # ROCENET_GO_<NAME>.
  function(rocenet_go_program name package)
    # In a directory of its own: ninja refuses a file with the target's path.
    set(binary ${PROJECT_BINARY_DIR}/go/${name})
    get_property(sources GLOBAL PROPERTY ROCENET_GO_SOURCES)
    add_custom_command(
      OUTPUT ${binary}
      COMMAND ${CMAKE_COMMAND} -E env ${ROCENET_GO_ENV}
              ${ROCENET_GO_EXECUTABLE} build -trimpath "-ldflags=-s -w -X main.version=${PROJECT_VERSION}"
              -o ${binary} ${package}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      DEPENDS ${sources}
      COMMENT "go build ${name}"
      VERBATIM)
    add_custom_target(${name} ALL DEPENDS ${binary})
    if(NOT "NO_INSTALL" IN_LIST ARGN)
      install(PROGRAMS ${binary} DESTINATION bin COMPONENT runtime)
    endif()
    set_property(GLOBAL PROPERTY ROCENET_GO_${name} ${binary})
  endfunction()

  get_filename_component(go_bin_dir ${ROCENET_GO_EXECUTABLE} DIRECTORY)
  # ROCENET_ROCENETD: the operator's tests check what it renders with the
  # real daemon (rocenetd --check_config).
  add_test(NAME go_test
    COMMAND ${CMAKE_COMMAND} -E env ${ROCENET_GO_ENV} ROCENET_ROCENETD=$<TARGET_FILE:rocenetd>
            sh -c "unformatted=$(${go_bin_dir}/gofmt -l plugins operator internal) && test -z \"$unformatted\" || { echo \"gofmt: $unformatted\"; exit 1; }; ${ROCENET_GO_EXECUTABLE} vet ./... && ${ROCENET_GO_EXECUTABLE} test -count=1 ./..."
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(go_test PROPERTIES LABELS "unit;go")
endif()
