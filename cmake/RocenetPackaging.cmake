# Install rules and the DEB package (CPack) for hosts outside Kubernetes, and
# the file layout the container image uses (packaging/container/Containerfile).
#
# Two install components:
#   runtime  the binaries: /usr/sbin/rocenetd, /usr/bin/rocectl,
#            /usr/bin/rocenet-device-plugin and the CNI plugin in
#            /usr/lib/cni/rocenet (Debian's CNI plugin directory, where
#            containernetworking-plugins puts its plugins; /opt is not for
#            packages). The image installs only this component.
#   host     the systemd unit, /etc/rocenet/config.yaml, the iproute2 name of
#            rocenet's route protocol, the README and docs/.
#
# `cpack -G DEB` in the build directory (after building the four binaries)
# makes one package, rocenet_<version>_<arch>.deb, from both components. Its
# dependencies on the Debian runtime libraries come from dpkg-shlibdeps
# (dpkg-dev). Where each binary goes is said here alone.
set(ROCENET_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)

install(TARGETS rocenetd RUNTIME DESTINATION sbin COMPONENT runtime)
install(TARGETS rocectl rocenet-device-plugin RUNTIME DESTINATION bin COMPONENT runtime)
install(TARGETS rocenet RUNTIME DESTINATION lib/cni COMPONENT runtime)

install(FILES ${ROCENET_PACKAGING_DIR}/systemd/rocenetd.service
        DESTINATION /lib/systemd/system COMPONENT host)
install(FILES ${ROCENET_PACKAGING_DIR}/systemd/config.yaml
        DESTINATION /etc/rocenet COMPONENT host)
install(FILES ${ROCENET_PACKAGING_DIR}/iproute2/rocenet.conf
        DESTINATION /etc/iproute2/rt_protos.d COMPONENT host)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION share/doc/rocenet COMPONENT host)
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
    "RoCE scale-out network daemon, CLI, CNI plugin and kubelet device plugin")
set(CPACK_PACKAGE_DESCRIPTION
    "rocenetd finds a node's RoCE scale-out ports, addresses them from the\
 switch's LLDP announcements, keeps them configured and reports their\
 health over gRPC and Prometheus metrics. rocectl is its admin CLI; the\
 rocenet CNI plugin hands whole ports to pods.")
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
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "containernetworking-plugins")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${ROCENET_PACKAGING_DIR}/deb/conffiles
    ${ROCENET_PACKAGING_DIR}/deb/postinst
    ${ROCENET_PACKAGING_DIR}/deb/prerm
    ${ROCENET_PACKAGING_DIR}/deb/postrm)

include(CPack)
