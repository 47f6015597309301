#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every file the tree names is in the tree.

  check_references.py ROOT        exit 0 when every reference resolves, 1
                                  listing each one that does not
  check_references.py --self-test plants a reference to a missing file of
                                  each kind in a small tree and checks that
                                  each is refused and nothing else is

A comment that cites a document which is not there sends a reader nowhere,
and a message that does so sends an operator nowhere. So:

  * a Markdown file's name (`docs/health.md`, `README.md`, or `health.md`
    in a document beside it) must exist wherever a source file says it: in
    its comments, docstrings and strings (messages cite documents too), and
    in every document; a `#section` after it must be a heading of that
    file;
  * a repository path (`daemon/lldp/codec.h`, `tests/docs/`, anything under
    one of TOP_DIRS) must exist where a comment or docstring names it, and
    anywhere in a Markdown document.

Where a reference resolves: `./` and `../` from the citing file's
directory; any other path from the top of the tree; a bare Markdown name
beside the citing file, at the top or in docs/. Not references: another
project's file (a path whose first directory is not one of this tree's, as
`examples/x/README.md` of another repository), a path in code (a string a
program uses is its own tests' business, and many are relative to a build
tree), a URL, an absolute path, a glob or a template
(`tests/k8s/components/*/go.mod`, `claim-<uid>/`), and the strings of a
Python function named `self_test`, which plant missing files on purpose.
Data (fixtures, fuzz seeds, JSON, go.sum) and build trees are not read.

Each reference that does not resolve is one line, the citing file, the
line and the missing path:

    FILE:LINE: PATH: no such file in the tree
"""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tempfile
import tokenize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_docs import anchors_of  # noqa: E402  (GitHub's anchor rule, kept in one place)

# The top-level directories a repository path starts with.
TOP_DIRS = ("daemon", "plugins", "operator", "client", "proto", "packaging", "tests", "docs", "cmake", ".ci")
# A run of characters a path is made of; a reference is one whole run.
RUN = re.compile(r"[A-Za-z0-9_.+/-]+")
ANCHOR = re.compile(r"#([A-Za-z0-9_-]+)")
# Next to one of these a run is part of a glob, a template or a variable.
PLACEHOLDER = set("*<>{}$%@~")
SKIP_DIRS = {"__pycache__", "fixtures", "seeds", "node_modules", "corpus"}

# How a file's comments are written.
C_LIKE = {".cc", ".h", ".c", ".proto", ".go"}
HASH = {".sh", ".bash", ".cmake", ".yaml", ".yml", ".service", ".conf", ".supp"}
HASH_NAMED = {"CMakeLists.txt", "Makefile", "Containerfile", "run", "postinst", "prerm", "postrm",
              ".yamllint", ".clang-format", ".gitignore", ".dockerignore", ".helmignore"}

# What a part of a file may reference: everything, or Markdown names only.
ALL, MARKDOWN = "all", "markdown"


def kind_of(name: str) -> str | None:
    ext = os.path.splitext(name)[1]
    if name.endswith(".md"):
        return "markdown"
    if name.endswith(".py"):
        return "python"
    if ext in C_LIKE:
        return "c"
    if ext in HASH or name in HASH_NAMED:
        return "hash"
    return None


def files_of(root: str):
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")
                         and (not d.startswith(".") or d == ".ci"))
        for name in sorted(files):
            if kind_of(name) is not None:
                yield os.path.join(directory, name)


def split_lines(line: int, text: str, what: str) -> list[tuple[int, str, str]]:
    return [(line + i, part, what) for i, part in enumerate(text.split("\n"))]


def c_parts(text: str) -> list[tuple[int, str, str]]:
    """(line, text, what) of the comments (ALL) and strings (MARKDOWN) of C,
    C++, Protobuf or Go source."""
    parts: list[tuple[int, str, str]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            parts.append((line, text[i + 2:end], ALL))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            parts += split_lines(line, text[i + 2:end], ALL)
            line += text.count("\n", i, end)
            i = end + 2
        elif c == '"' and i > 0 and text[i - 1] == "R" and "(" in text[i + 1:i + 18]:
            delimiter = text[i + 1:text.index("(", i + 1)]
            end = text.find(")" + delimiter + '"', i)
            end = n if end < 0 else end
            parts += split_lines(line, text[i + 1:end], MARKDOWN)
            line += text.count("\n", i, end)
            i = end + len(delimiter) + 2
        elif c == "`":  # Go's raw strings
            end = text.find("`", i + 1)
            end = n if end < 0 else end
            parts += split_lines(line, text[i + 1:end], MARKDOWN)
            line += text.count("\n", i, end)
            i = end + 1
        elif c == '"' or (c == "'" and (i == 0 or not text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            parts.append((line, text[i + 1:min(j, n)], MARKDOWN))
            i = j + 1 if j < n and text[j] == c else j
        else:
            if c == "\n":
                line += 1
            i += 1
    return parts


def hash_parts(text: str) -> list[tuple[int, str, str]]:
    """Shell, CMake, YAML, Makefiles: what follows a # (outside quotes, at
    the start of a line or after a blank) is a comment (ALL); the rest of
    the line may name Markdown files only."""
    parts = []
    for number, line in enumerate(text.split("\n"), 1):
        quote, start = None, len(line)
        for k, c in enumerate(line):
            if quote:
                quote = None if c == quote else quote
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or line[k - 1].isspace()):
                start = k
                break
        parts.append((number, line[:start], MARKDOWN))
        parts.append((number, line[start + 1:], ALL))
    return parts


def python_parts(text: str) -> list[tuple[int, str, str]]:
    """Comments and docstrings (ALL), other strings (MARKDOWN); nothing of a
    function named self_test."""
    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError):
        return hash_parts(text)
    docstrings: set[int] = set()
    planted: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.add(first.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "self_test":
            planted.append((node.lineno, node.end_lineno or node.lineno))
    parts = []
    strings = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for token in tokens:
        line = token.start[0]
        if any(first <= line <= last for first, last in planted):
            continue
        if token.type == tokenize.COMMENT:
            parts.append((line, token.string[1:], ALL))
        elif token.type in strings:
            parts += split_lines(line, token.string, ALL if line in docstrings else MARKDOWN)
    return parts


def parts_of(path: str, text: str) -> list[tuple[int, str, str]]:
    kind = kind_of(os.path.basename(path))
    if kind == "markdown":
        return split_lines(1, text, ALL)
    if kind == "python":
        return python_parts(text)
    if kind == "c":
        return c_parts(text)
    return hash_parts(text)


def foreign(root: str, reference: str) -> bool:
    """Whether `reference` is a path in another project: its first
    directory is not one of this tree's."""
    first, slash, _ = reference.partition("/")
    return bool(slash) and first not in (".", "..", *TOP_DIRS) \
        and not os.path.isdir(os.path.join(root, first))


def resolves(root: str, citing: str, reference: str) -> str | None:
    """The file or directory `reference` names from `citing`, or None."""
    here = os.path.dirname(citing)
    if reference.startswith(("./", "../")):
        places = [here]
    elif "/" in reference:
        places = [root]
    else:
        places = [here, root, os.path.join(root, "docs")]
    for place in places:
        candidate = os.path.normpath(os.path.join(place, reference))
        if os.path.exists(candidate):
            return candidate
    return None


def references(text: str, what: str):
    """(reference, anchor or "") for every reference in one line's part."""
    for match in RUN.finditer(text):
        start, end = match.span()
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if before in PLACEHOLDER or after in PLACEHOLDER or before in ":/\\":
            continue  # a glob, a template, a variable, a URL
        token = match.group().rstrip(".")
        if not token or token.startswith("/"):
            continue
        is_markdown = token.endswith(".md") and len(token) > 3
        is_path = "/" in token and token.split("/", 1)[0] in TOP_DIRS
        if not is_markdown and not (what == ALL and is_path):
            continue
        anchor = ANCHOR.match(text, start + len(token)) if token == match.group() else None
        yield token, anchor.group(1) if anchor else ""


def check(root: str) -> list[str]:
    problems = []
    for path in files_of(root):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue  # not text
        name = os.path.relpath(path, root)
        for line, part, what in parts_of(path, text):
            for reference, anchor in references(part, what):
                if foreign(root, reference):
                    continue
                found = resolves(root, path, reference)
                if found is None:
                    problem = f"{name}:{line}: {reference}: no such file in the tree"
                elif anchor and found.endswith(".md") and os.path.isfile(found) \
                        and anchor not in anchors_of(found):
                    problem = (f"{name}:{line}: {reference}#{anchor}: no heading "
                               f"#{anchor} in {os.path.relpath(found, root)}")
                else:
                    continue
                if problem not in problems:  # a link may name its file twice: as text and target
                    problems.append(problem)
    return problems


def self_test() -> int:
    """A tree whose references resolve passes; each planted one is refused,
    by file and line."""
    planted = {
        "daemon/lldp/CMakeLists.txt": "# The codec (NOTES.md 3.3).\n",
        "daemon/lldp/codec.h": "#pragma once\n// Checked as docs/lldp.md says.\n",
        "daemon/lldp/agent.cc": "/* Frames go to\n   daemon/lldp/gone.h for decoding. */\n",
        "daemon/api/auth.cc": 'const char* kWhy = "see docs/security.md";\n',
        "tests/layering/check.py": 'RULE = ("BRIEF.md §2: common <- os")\n',
        "tests/layering/tool.py": '"""Checks the direction of daemon/old/."""\n',
        "tests/layering/other.py": "x = 1  # as tests/unit/gone_test.cc shows\n",
        "plugins/dra/driver.go": "// Attributes as in docs/health.md#no-such-section.\n",
        "docs/guide.md": "# Guide\nThe codec is `daemon/lldp/decoder.cc`, see ../HARDWARE.md.\n",
        "packaging/run.sh": "#!/bin/sh\necho 'read docs/nowhere.md'  # and daemon/x/\n",
    }
    wanted = {"daemon/lldp/CMakeLists.txt:1", "daemon/lldp/codec.h:2", "daemon/lldp/agent.cc:2",
              "daemon/api/auth.cc:1", "tests/layering/check.py:1", "tests/layering/tool.py:1",
              "tests/layering/other.py:1", "plugins/dra/driver.go:1", "docs/guide.md:2",
              "packaging/run.sh:2"}
    wanted_count = len(wanted) + 2  # guide.md and run.sh name two missing files each
    fine = {
        "README.md": "# rocenet\nSee [health](docs/health.md#link-down), `daemon/lldp/codec.h`, "
                     "docs/health.md's table and CONTRIBUTING.md.\n",
        "CONTRIBUTING.md": "# Contributing\nUnit tests mirror the tree (`tests/unit/`).\n",
        "docs/health.md": "# Health\n## Link down\nBack to [the top](../README.md); "
                          "[guide](guide.md).\n",
        "daemon/lldp/codec.cc": '// daemon/lldp/codec.h, docs/health.md#link-down, README.md.\n'
                                'const char* kBuilt = "tests/bench/lldp_decode_bench";\n'
                                'const char* kRe = R"(x)";  // tests/{unit,integration}/\n',
        "daemon/lldp/codec_test.cc": ("// `tests/k8s/components/*/go.mod`, <dir>/claim-<uid>/,\n"
                                      "// https://example.com/docs/gone.md, /usr/doc/x/README.md\n"
                                      "// build/daemon/server/rocenetd, $ROCENET_CACHE/docs/x.md\n"
                                      "// HabanaAI/vllm-fork examples/deepseek/README.md\n"),
        "tests/docs/tool.py": '"""Checks `docs/` against `daemon/`."""\n'
                              'BUILT = ("daemon/server", "plugins/dra/go")\n\n\n'
                              "def self_test():\n"
                              '    return {"docs/nope.md": "see GONE.md", "daemon/gone.cc": ""}\n',
        "packaging/ok.sh": "#!/bin/sh\ngrep -q '#' x  # as docs/health.md says\n",
        "plugins/dra/ok.go": "// Attributes: docs/health.md; `Raw strings` are fine\n"
                             "var s = `docs/health.md`\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**planted, **fine}.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        os.makedirs(os.path.join(root, "tests", "unit"), exist_ok=True)
        found = check(root)
    caught = {":".join(p.split(":")[:2]) for p in found}
    missed, wrong = wanted - caught, caught - wanted
    if missed or wrong or len(found) != wanted_count:
        print(f"self-test: missed {sorted(missed)}, wrongly refused {sorted(wrong)}; "
              f"{len(found)} problems, wanted {wanted_count}:", *found, sep="\n  ")
        return 1
    print(f"self-test: {wanted_count} planted references to missing files and sections "
          f"refused, the {len(fine)} files that name only what exists passed")
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
        print(f"{len(problems)} reference(s) to a file or section that is not in the tree")
        return 1
    print(f"{sum(1 for _ in files_of(argv[1]))} files: every file and section they name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
