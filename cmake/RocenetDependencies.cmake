# SPDX-License-Identifier: Apache-2.0
# Every third-party dependency of rocenet, found once. All come from Debian 12
# packages (see packaging/debian-deps.sh).
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
# libcrypto: HMAC-SHA256 of the diagnostics data port's peer requests.
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBNL REQUIRED IMPORTED_TARGET libnl-3.0 libnl-route-3.0)
# sd-bus: rocenetd's calls to NetworkManager on the system bus.
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd)

find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
