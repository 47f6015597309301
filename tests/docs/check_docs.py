#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps the documentation true to the tree.

  check_docs.py ROOT        checks README.md, CONTRIBUTING.md, docs/*.md and
                            plugins/cni/README.md
  check_docs.py --self-test checks that planted mistakes are found

What is checked:
  * every relative link resolves: the file exists and, for #anchor, the file
    has a heading with that anchor (GitHub's rule: lower case, punctuation
    dropped, spaces to hyphens);
  * every source path a document names in `backticks` (daemon/..., tests/...,
    packaging/..., and the other top-level directories) exists, and so does
    every integration test it names (integration.cni_test);
  * every metric family rocenetd defines (a "rocenet_..." name in daemon/)
    is named in docs/;
  * every health condition (daemon/health/port_health.h) has its row in
    docs/health.md.

Each mistake is one line naming the document, the line and what is wrong;
the exit code is 1 when there is any.
"""

from __future__ import annotations

import glob
import os
import re
import sys
import tempfile

TOP_DIRS = ("daemon", "plugins", "operator", "client", "proto", "packaging", "tests", "docs", "cmake")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^(?:{})/[A-Za-z0-9_./+-]*$".format("|".join(TOP_DIRS)))
METRIC = re.compile(r'"(rocenet_[a-z0-9_]+)"')
INTEGRATION_TEST = re.compile(r"\bintegration\.([a-z0-9_]+_test)\b")
CONDITION = re.compile(r'inline constexpr absl::string_view k\w+ = "(\w+)";')


def documents(root: str) -> list[str]:
    found = [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md"),
             os.path.join(root, "plugins", "cni", "README.md")]
    found += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    return [path for path in found if os.path.exists(path)]


def anchor(heading: str) -> str:
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(text: str) -> list[tuple[int, str, bool]]:
    """(line number, line, inside a code fence) for every line."""
    out, fence = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        out.append((number, line, fence))
    return out


def anchors_of(path: str) -> set[str]:
    seen: set[str] = set()
    for _, line, fence in prose_lines(open(path).read()):
        match = re.match(r"^#{1,6} (.+)$", line)
        if match and not fence:
            seen.add(anchor(match.group(1)))
    return seen


def check_links(root: str, path: str, text: str) -> list[str]:
    problems = []
    name = os.path.relpath(path, root)
    for number, line, fence in prose_lines(text):
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            file_part, _, fragment = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not os.path.exists(linked):
                problems.append(f"{name}:{number}: link to {target}: no such file")
            elif fragment and linked.endswith(".md") and fragment not in anchors_of(linked):
                problems.append(f"{name}:{number}: link to {target}: no heading #{fragment}")
    return problems


def check_paths(root: str, path: str, text: str) -> list[str]:
    problems = []
    name = os.path.relpath(path, root)
    for number, line, _ in prose_lines(text):
        for code in CODE.findall(line):
            for token in code.split():
                token = token.rstrip(",.;:)")
                if not PATH.match(token) or "*" in token:
                    continue
                if not os.path.exists(os.path.join(root, token)):
                    problems.append(f"{name}:{number}: `{token}`: no such file or directory")
        for test in INTEGRATION_TEST.findall(line):
            if not os.path.exists(os.path.join(root, "tests", "integration", test + ".py")):
                problems.append(f"{name}:{number}: integration.{test}: no such test")
    return problems


def metric_families(root: str) -> set[str]:
    names: set[str] = set()
    for path in glob.glob(os.path.join(root, "daemon", "**", "*.cc"), recursive=True):
        names.update(METRIC.findall(open(path).read()))
    return names


def conditions(root: str) -> list[str]:
    return CONDITION.findall(open(os.path.join(root, "daemon", "health", "port_health.h")).read())


def check(root: str) -> list[str]:
    problems = []
    for path in documents(root):
        text = open(path).read()
        problems += check_links(root, path, text)
        problems += check_paths(root, path, text)
    docs_text = "".join(open(p).read() for p in glob.glob(os.path.join(root, "docs", "*.md")))
    for family in sorted(metric_families(root)):
        if f"`{family}`" not in docs_text:
            problems.append(f"docs/: metric family {family} (defined in daemon/) is not documented")
    health = os.path.join(root, "docs", "health.md")
    health_text = open(health).read() if os.path.exists(health) else ""
    for condition in conditions(root):
        if f"| `{condition}` |" not in health_text:
            problems.append(f"docs/health.md: condition {condition} has no row in the table")
    return problems


def self_test() -> int:
    """A small tree with one of each mistake, and one without any."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "daemon", "health"))
        with open(os.path.join(root, "daemon", "health", "port_health.h"), "w") as f:
            f.write('inline constexpr absl::string_view kLinkDown = "LinkDown";\n')
        with open(os.path.join(root, "daemon", "health", "metrics.cc"), "w") as f:
            f.write('Family("rocenet_port_carrier");\n')
        good = {"README.md": "# rocenet\nSee [health](docs/health.md#link-down) and `daemon/health/`.\n",
                "docs/health.md": "# Health\n## Link down\n| `LinkDown` | x |\n`rocenet_port_carrier`\n"}
        bad = {"README.md": "See [x](docs/nope.md), [y](docs/health.md#nowhere), "
                            "`daemon/gone.cc` and integration.gone_test.\n",
               "docs/health.md": "# Health\n| `LinkUp` | x |\n"}
        for files, want in ((good, 0), (bad, 6)):
            for rel, text in files.items():
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
            found = check(root)
            if len(found) != want:
                print(f"self-test: expected {want} problems, found {len(found)}:", *found,
                      sep="\n  ")
                return 1
    print("self-test: a clean tree passes; a missing file, anchor, path, test, metric "
          "and condition are each found")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"{len(documents(argv[1]))} documents: every link, path, metric family and "
          "condition checked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
