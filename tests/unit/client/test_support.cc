// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/client/test_support.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "client/dispatch.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl::testutil {

int BindUnixSocket(const std::string& path, bool listen) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket: " << strerror(errno);
    return -1;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    ADD_FAILURE() << "socket path too long: " << path;
    close(fd);
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
      (listen && ::listen(fd, 4) != 0)) {
    ADD_FAILURE() << "bind/listen " << path << ": " << strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

void WriteFile(const std::string& path) {
  std::ofstream file(path);
  file << "not a socket\n";
}

CliResult RunCli(std::vector<std::string> args, bool err_is_terminal) {
  args.insert(args.begin(), "rocectl");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::ostringstream out;
  std::ostringstream err;
  const int code =
      RunRocectl(static_cast<int>(argv.size()), argv.data(), out, err, err_is_terminal);
  return {code, out.str(), err.str()};
}

}  // namespace rocenet::rocectl::testutil
