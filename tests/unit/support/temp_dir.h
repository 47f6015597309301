// SPDX-License-Identifier: Apache-2.0
// TempDir: a directory of the test's own, unique per TempDir (so tests run
// in parallel under `ctest -j` never share a path), short (under /tmp, so
// unix socket paths in it fit sun_path), removed with everything in it when
// the TempDir goes.
#pragma once

#include <string>

namespace rocenet::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace rocenet::testing
