#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what rocenet needs from Debian 12 packages.
#   debian-deps.sh build   compilers and libraries to build everything
#   debian-deps.sh demo    build + what the demo runs against (make demo)
#   debian-deps.sh check   what the format and lint checks run (make check)
#   debian-deps.sh test    build + check + what the tests and the demo run against
# Idempotent; needs root only when something is missing.
set -euo pipefail

build_packages=(
  cmake ninja-build g++ pkg-config make
  mold  # the linker (cmake/RocenetToolchain.cmake); ld.bfd links when it is missing
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libnl-3-dev libnl-route-3-dev prometheus-cpp-dev
  libspdlog-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev  # HMAC of the diagnostics data port's peer requests
  libsystemd-dev  # sd-bus: rocenetd tells NetworkManager to leave the ports
  python3  # CMake configures the integration tests (find_package(Python3))
  help2man  # the man pages, from each binary's --help
)
# The format and lint checks (tests/lint/check.sh); ruff comes from PyPI
# into a virtual environment, staticcheck from the Go module proxy.
check_packages=(clang-format shellcheck python3 python3-venv git)
# The simulated fabric: namespaces and veth pairs (iproute2), the switch
# (lldpd), the sysfs follower and the fabric scripts (python3), ps (procps).
demo_packages=(lldpd iproute2 procps python3)
test_packages=(
  lldpd iproute2 iputils-ping containernetworking-plugins procps curl
  python3 python3-pytest python3-prometheus-client python3-grpcio python3-protobuf
  clang libclang-rt-14-dev  # builds the sanitizer trees and the libFuzzer targets
  yamllint dpkg-dev python3-yaml
  graphviz
  openssl
  lintian     # the DEB is checked as Debian checks its own
  prometheus  # promtool: the alert rules and a live /metrics scrape
  # the real NetworkManager beside rocenetd (network_manager_test), on a
  # system bus of the test's own
  network-manager dbus-daemon dbus-bin
  perftest    # ib_write_bw: the RDMA benchmark's real-tool test (no RDMA device needed)
  libfaketime  # a node whose clock is ahead of the others' (diag_clock_test)
  conmon  # CRI-O's container monitor on the CRI-O node (tests/k8s)
  ibverbs-providers  # librxe: perftest over rdma_rxe in the real-kernel tests
  # The end-to-end tests (tests/k8s/): the image's Debian base (debootstrap),
  # its build (podman with Debian's runc, which containerd runs too), the
  # test pods' shell and tools (busybox-static), kubelet's iptables rules,
  # nsenter (util-linux), the training job's SSH key (ssh-keygen). Go comes
  # from the machine (the Go module proxy serves the components' modules);
  # without it they report SKIPPED.
  debootstrap podman runc busybox-static iptables util-linux openssh-client
  # the real-kernel tests (tests/vm): qemu and its qboot firmware, depmod
  # for Debian's kernel package, cpio for the guest's initramfs
  qemu-system-x86 qemu-system-data kmod cpio
)

mode="${1:-build}"
case "$mode" in
  build) packages=("${build_packages[@]}") ;;
  demo) packages=("${build_packages[@]}" "${demo_packages[@]}") ;;
  check) packages=("${check_packages[@]}") ;;
  test) packages=("${build_packages[@]}" "${check_packages[@]}" "${demo_packages[@]}"
          "${test_packages[@]}") ;;
  *) echo "usage: $0 build|demo|check|test" >&2; exit 2 ;;
esac
# The manifest tests run `kubectl kustomize`. Debian's kubernetes-client
# provides kubectl; a kubectl from elsewhere (same /usr/bin/kubectl) is kept.
if [ "$mode" = test ] && ! command -v kubectl >/dev/null; then
  packages+=(kubernetes-client)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Root only to install: with everything there, anyone may build.
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "debian-deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "debian-deps.sh: install them as root (sudo make deps, or sudo bash $0 $mode)" >&2
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# NetworkManager is installed for one test, which starts its own in a
# namespace; on a host with systemd its package starts the service, which
# would take the host's network devices: installed here, it is stopped and
# disabled again, as the host was before.
if [[ " ${missing[*]} " == *" network-manager "* ]] && [ -d /run/systemd/system ]; then
  systemctl disable --now NetworkManager.service NetworkManager-wait-online.service \
    NetworkManager-dispatcher.service 2>/dev/null || true
  echo "note: network-manager installed for the tests; its service is disabled"
fi
# The test fabric starts lldpd by hand in namespaces; the packaged service is
# not needed and would answer on the host's own interfaces.
if [ "$mode" = demo ] || [ "$mode" = test ] && command -v systemctl >/dev/null && systemctl is-active -q lldpd 2>/dev/null; then
  echo "note: the system lldpd service is running; the tests do not use it"
fi
