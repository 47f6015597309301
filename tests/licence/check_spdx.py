#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the tree says its licence: an SPDX-License-Identifier
line for Apache-2.0 (LICENSE) among its first lines.

    check_spdx.py ROOT          exit 0 when every source file has the line,
                                1 listing each one that does not
    check_spdx.py --add ROOT    adds the line where it is missing (after a
                                shebang), then checks
    check_spdx.py --self-test   a file without the line is caught, one with
                                it passes, --add fixes the first

Source files: C++, Protobuf, Python, shell, CMake and Makefiles, the
Containerfile, the maintainer scripts and the bash completion. Data
(fixtures, fuzz seeds, JSON, generated code and build trees) is not.
"""

from __future__ import annotations

import os
import sys
import tempfile

TAG = "SPDX-License-Identifier: Apache-2.0"
# How many lines from the top the tag may be on (after a shebang or a
# header a tool requires).
WITHIN = 3
COMMENT = {".cc": "//", ".h": "//", ".proto": "//", ".py": "#", ".sh": "#", ".cmake": "#",
           ".bash": "#", ".go": "//", ".c": "//"}
NAMED = {"CMakeLists.txt": "#", "Makefile": "#", "Containerfile": "#", "run": "#",
         "postinst": "#", "prerm": "#", "postrm": "#"}
SKIP_DIRS = {".git", "__pycache__", "fixtures", "seeds", "node_modules"}


def comment_of(name: str) -> str | None:
    if name in NAMED:
        return NAMED[name]
    return COMMENT.get(os.path.splitext(name)[1])


def source_files(root: str):
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if comment_of(name) is not None:
                yield os.path.join(directory, name)


def has_tag(path: str) -> bool:
    with open(path, errors="replace") as f:
        head = [f.readline() for _ in range(WITHIN)]
    return any(TAG in line for line in head)


def add_tag(path: str) -> None:
    comment = comment_of(os.path.basename(path))
    with open(path, errors="replace") as f:
        text = f.read()
    line = f"{comment} {TAG}\n"
    if text.startswith("#!"):
        first, _, rest = text.partition("\n")
        text = f"{first}\n{line}{rest}"
    else:
        text = line + text
    mode = os.stat(path).st_mode
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def check(root: str) -> list[str]:
    return [os.path.relpath(p, root) for p in source_files(root) if not has_tag(p)]


def self_test() -> int:
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "daemon"))
        os.makedirs(os.path.join(root, "tests", "fixtures"))
        files = {
            "daemon/bad.cc": "#include <x>\n",
            "daemon/good.h": f"// {TAG}\n#pragma once\n",
            "tool.py": f"#!/usr/bin/env python3\n# {TAG}\n",
            "script.sh": "#!/bin/sh\necho\n",
            "tests/fixtures/data.py": "x = 1\n",
        }
        for rel, text in files.items():
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = sorted(check(root))
        if found != ["daemon/bad.cc", "script.sh"]:
            print(f"self-test: found {found}, wanted daemon/bad.cc and script.sh")
            return 1
        for rel in found:
            add_tag(os.path.join(root, rel))
        with open(os.path.join(root, "script.sh")) as f:
            if not f.read().startswith(f"#!/bin/sh\n# {TAG}\n"):
                print("self-test: --add did not keep the shebang first")
                return 1
        if check(root):
            print(f"self-test: still missing after --add: {check(root)}")
            return 1
    print("self-test: files without the licence line caught and fixed, the others passed")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    add = len(argv) == 3 and argv[1] == "--add"
    if not add and len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[-1]
    if add:
        for rel in check(root):
            add_tag(os.path.join(root, rel))
    missing = check(root)
    for rel in missing:
        print(f"{rel}: no \"{TAG}\" line in its first {WITHIN} lines")
    if missing:
        print(f"{len(missing)} source file(s) without their licence line "
              f"(tests/licence/check_spdx.py --add . adds it)")
        return 1
    print("every source file says its licence (Apache-2.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
