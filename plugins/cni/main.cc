// rocenet: the CNI plugin of rocenetd. Container runtimes (through Multus)
// run it once per attachment; everything happens in Run() (dispatch.h).
#include <iostream>
#include <string>
#include <string_view>

#include "plugins/cni/dispatch.h"

extern char** environ;

int main() {
  rocenet::cni::Environment env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view pair(*entry);
    const size_t equals = pair.find('=');
    if (equals != std::string_view::npos) {
      env.emplace(pair.substr(0, equals), pair.substr(equals + 1));
    }
  }
  return rocenet::cni::Run(env, std::cin, std::cout, std::cerr);
}
