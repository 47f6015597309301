// SPDX-License-Identifier: Apache-2.0
// YAML text of the collective stage's documents, written the way a person
// would: block style, multi-line strings (shell scripts) as literal blocks,
// and strings a reader could take for a number or a boolean in quotes.
// Pure, thread-safe.
#pragma once

#include <string>

#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl::collective {

// A scalar that must stay a string ("5555", "true"): quoted when written.
YAML::Node Quoted(const std::string& text);

// "---\n" and the document, ending in one newline.
std::string ToYamlDocument(const YAML::Node& document);

}  // namespace rocenet::rocectl::collective
