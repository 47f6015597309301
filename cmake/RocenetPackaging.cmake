# SPDX-License-Identifier: Apache-2.0
# Install rules and the DEB package (CPack) for hosts outside Kubernetes, and
# the file layout the container image uses (packaging/container/Containerfile).
#
# Two install components:
#   runtime  the binaries: /usr/sbin/rocenetd, /usr/sbin/rocenet-diagd,
#            /usr/bin/rocectl, /usr/bin/rocenet-device-plugin,
#            /usr/bin/rocenet-dra-plugin
#            (plugins/dra, when Go is there) and the CNI plugin in
#            /usr/lib/cni/rocenet (Debian's CNI plugin directory, where
#            containernetworking-plugins puts its plugins; /opt is not for
#            packages), and their copyright file. The image installs only
#            this component.
#   host     the systemd units, /etc/rocenet/config.yaml, the iproute2 name of
#            rocenet's route protocol, the README and docs/, the man pages,
#            and what Debian asks of a package: the changelog and the
#            lintian overrides.
#
# `cpack -G DEB` in the build directory (after building the binaries)
# makes one package, rocenet_<version>_<arch>.deb, from both components. Its
# dependencies on the Debian runtime libraries come from dpkg-shlibdeps
# (dpkg-dev). Where each binary goes is said here alone. lintian accepts
# the package (integration.packaging_deb_test runs it).
set(ROCENET_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)

install(TARGETS rocenetd rocenet-diagd RUNTIME DESTINATION sbin COMPONENT runtime)
install(TARGETS rocectl rocenet-device-plugin RUNTIME DESTINATION bin COMPONENT runtime)
install(TARGETS rocenet RUNTIME DESTINATION lib/cni COMPONENT runtime)

install(FILES ${ROCENET_PACKAGING_DIR}/systemd/rocenetd.service
              ${ROCENET_PACKAGING_DIR}/systemd/rocenet-diagd.service
        DESTINATION /lib/systemd/system COMPONENT host)
install(FILES ${ROCENET_PACKAGING_DIR}/systemd/config.yaml
        DESTINATION /etc/rocenet COMPONENT host)
install(FILES ${ROCENET_PACKAGING_DIR}/iproute2/rocenet.conf
        DESTINATION /etc/iproute2/rt_protos.d COMPONENT host)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION share/doc/rocenet COMPONENT host)
# The copyright file (the licence of rocenet and of what its static CNI
# plugin contains) goes with the binaries, into the DEB and the image alike.
install(FILES ${ROCENET_PACKAGING_DIR}/deb/copyright
        DESTINATION share/doc/rocenet COMPONENT runtime)
install(FILES ${ROCENET_PACKAGING_DIR}/deb/lintian-overrides
        DESTINATION share/lintian/overrides RENAME rocenet COMPONENT host)

# The changelog, compressed as Debian wants it (gzip -9n: no name or time,
# so the same changelog gives the same bytes). Its newest entry must be this
# version.
set(ROCENET_CHANGELOG ${ROCENET_PACKAGING_DIR}/deb/changelog)
file(STRINGS ${ROCENET_CHANGELOG} ROCENET_CHANGELOG_TOP LIMIT_COUNT 1)
if(NOT ROCENET_CHANGELOG_TOP MATCHES "^rocenet \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "packaging/deb/changelog: the newest entry is \"${ROCENET_CHANGELOG_TOP}\", "
                      "not version ${PROJECT_VERSION} of CMakeLists.txt")
endif()
set(ROCENET_CHANGELOG_GZ ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${ROCENET_CHANGELOG_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
  COMMAND gzip -9nc ${ROCENET_CHANGELOG} > ${ROCENET_CHANGELOG_GZ}
  DEPENDS ${ROCENET_CHANGELOG}
  COMMENT "Compressing the changelog")
add_custom_target(rocenet_changelog ALL DEPENDS ${ROCENET_CHANGELOG_GZ})
install(FILES ${ROCENET_CHANGELOG_GZ} DESTINATION share/doc/rocenet COMPONENT host)

# Man pages, made from each binary's --help and --version by help2man, so
# they say what the flags of this build are. Not in sanitizer builds (whose
# binaries would run instrumented at build time).
find_program(ROCENET_HELP2MAN help2man)
if(ROCENET_HELP2MAN AND NOT ROCENET_SANITIZE)
  set(ROCENET_MAN_PAGES)
  # binary|section|name: a list of lists would flatten into one.
  set(pages "rocenetd|8|the rocenet node daemon for RoCE scale-out ports"
            "rocenet-diagd|8|the rocenet diagnostics daemon: rocectl diag tests between nodes"
            "rocectl|1|show and triage what rocenetd knows of a node's RoCE ports"
            "rocenet-device-plugin|1|kubelet device plugin for rocenet's RoCE scale-out ports")
  # The Go programs the DEB installs are custom targets' files
  # (cmake/RocenetGo.cmake's rocenet_go_program), when built.
  get_property(dra_plugin GLOBAL PROPERTY ROCENET_GO_rocenet-dra-plugin)
  if(dra_plugin)
    list(APPEND pages "rocenet-dra-plugin|1|DRA kubelet plugin for rocenet's RoCE scale-out ports")
  endif()
  get_property(kubectl_plugin GLOBAL PROPERTY ROCENET_GO_kubectl-rocenet)
  if(kubectl_plugin)
    list(APPEND pages "kubectl-rocenet|1|kubectl and oc plugin: rocenet's scale-out network across the cluster")
  endif()
  foreach(entry ${pages})
    string(REPLACE "|" ";" page "${entry}")
    list(GET page 0 binary)
    list(GET page 1 section)
    list(GET page 2 name)
    set(version_string "")
    if(binary STREQUAL "rocenet-dra-plugin")
      set(program ${dra_plugin})
      set(deps ${binary} ${dra_plugin})
    elseif(binary STREQUAL "kubectl-rocenet")
      set(program ${kubectl_plugin})
      set(deps ${binary} ${kubectl_plugin})
      # Its --version names it "kubectl rocenet", which help2man would
      # take for a program named kubectl.
      set(version_string "--version-string=${PROJECT_VERSION}")
    else()
      set(program $<TARGET_FILE:${binary}>)
      set(deps ${binary})
    endif()
    set(out ${PROJECT_BINARY_DIR}/packaging/man/${binary}.${section}.gz)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging/man
      COMMAND ${ROCENET_HELP2MAN} --no-info --no-discard-stderr --section=${section}
              "--name=${name}" ${version_string} --output=${PROJECT_BINARY_DIR}/packaging/man/${binary}.${section}
              ${program}
      COMMAND gzip -9nf ${PROJECT_BINARY_DIR}/packaging/man/${binary}.${section}
      DEPENDS ${deps}
      COMMENT "Man page ${binary}(${section})"
      VERBATIM)
    list(APPEND ROCENET_MAN_PAGES ${out})
    install(FILES ${out} DESTINATION share/man/man${section} COMPONENT host)
  endforeach()
  add_custom_target(rocenet_man_pages ALL DEPENDS ${ROCENET_MAN_PAGES})
endif()
# Beside the README, so that its links to docs/ work where it is installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
        DESTINATION share/doc/rocenet/docs COMPONENT host FILES_MATCHING PATTERN "*.md")
# Every configuration key with its default, when the tree has the example.
file(GLOB ROCENET_CONFIG_EXAMPLES ${ROCENET_PACKAGING_DIR}/config/*.yaml)
if(ROCENET_CONFIG_EXAMPLES)
  install(FILES ${ROCENET_CONFIG_EXAMPLES}
          DESTINATION share/doc/rocenet/examples COMPONENT host)
endif()

set(CPACK_PACKAGE_NAME rocenet)
set(CPACK_PACKAGE_VENDOR rocenet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rocenet maintainers <maintainers@rocenet.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "RoCE scale-out network daemons, CLI, CNI plugin and kubelet plugins")
# Lines of at most 80 characters, as Debian's control files want them.
set(CPACK_PACKAGE_DESCRIPTION
    "rocenetd finds a node's RoCE scale-out ports, addresses them from the
switch's LLDP announcements, keeps them configured and reports their
health over gRPC and Prometheus metrics. rocenet-diagd runs the
diagnostics between nodes (reach, bandwidth, RDMA) with CAP_NET_RAW alone.
rocectl is their admin CLI; the rocenet CNI plugin hands whole ports to
pods.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_COMPONENTS_ALL runtime host)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)

set(CPACK_DEBIAN_PACKAGE_NAME rocenet)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# perftest: the RDMA stage of rocenet-diagd runs its ib_write_bw and ib_write_lat.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "containernetworking-plugins, perftest")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${ROCENET_PACKAGING_DIR}/deb/conffiles
    ${ROCENET_PACKAGING_DIR}/deb/postinst
    ${ROCENET_PACKAGING_DIR}/deb/prerm
    ${ROCENET_PACKAGING_DIR}/deb/postrm)

include(CPack)
