#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Format and lint checks of the whole tree, in seconds: `make check`, and
# the first phase of `make test`.
#
#   clang-format  every .cc/.h as .clang-format has it (--fix: rewrite them)
#   gofmt, go vet, staticcheck   the Go module (go.mod: plugins/, operator/, internal/)
#   ruff          the Python under tests/ (rules: tests/ruff.toml)
#   ShellCheck    every shell script (warnings and errors)
#
#   tests/lint/check.sh [--fix]
#
# Each check prints one line: ok, its findings, or SKIPPED with the reason
# when its tool cannot be had here (never passed). Exit 1 when any check
# found something. Run from anywhere; reads the files git tracks.
set -uo pipefail

top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$top" || exit 2
fix=0
[ "${1:-}" = --fix ] && fix=1
failed=()
skipped=()

# report NAME STATUS OUTPUT: one line per check (with the seconds since
# the previous one), its findings below it.
last=$SECONDS
report() {
  local name=$1 status=$2 output=$3 took=$((SECONDS - last))
  last=$SECONDS
  if [ "$status" -eq 0 ]; then
    echo "check $name: ok (${took} s)"
  else
    echo "check $name: FAILED (${took} s)"
    printf '%s\n' "$output" | sed 's/^/  /'
    failed+=("$name")
  fi
}

skip() {
  echo "check $1: SKIPPED ($2)"
  skipped+=("$1")
}

mapfile -t cxx < <(git ls-files '*.cc' '*.h')
mapfile -t python < <(git ls-files 'tests/*.py')
mapfile -t shell < <(git ls-files '*.sh' .ci/run packaging/deb/postinst packaging/deb/postrm \
  packaging/deb/prerm)

if command -v clang-format >/dev/null; then
  if [ $fix -eq 1 ]; then
    clang-format -i "${cxx[@]}"
  fi
  out="$(clang-format --dry-run -Werror "${cxx[@]}" 2>&1 | grep -E '^[^ ].*: error:' |
    sed -E 's/:[0-9]+:[0-9]+: error:.*//' | sort -u)"
  report clang-format "$([ -z "$out" ] && echo 0 || echo 1)" \
    "$out${out:+
(tests/lint/check.sh --fix rewrites them)}"
else
  skip clang-format "clang-format is not installed (Debian: clang-format)"
fi

if command -v go >/dev/null; then
  export GOFLAGS=-mod=readonly GOTOOLCHAIN=local
  out="$(gofmt -l plugins operator internal 2>&1)"
  [ $fix -eq 1 ] && [ -n "$out" ] && gofmt -w plugins operator internal && out=""
  report gofmt "$([ -z "$out" ] && echo 0 || echo 1)" "$out"
  out="$(go vet ./... 2>&1)"
  report "go vet" $? "$out"
  staticcheck="$(bash tests/lint/tools.sh staticcheck)"
  if [ -n "$staticcheck" ]; then
    out="$("$staticcheck" ./... 2>&1)"
    report staticcheck $? "$out"
  else
    skip staticcheck "it could not be built here (see above)"
  fi
else
  skip "gofmt, go vet, staticcheck" "go is not installed"
fi

ruff="$(bash tests/lint/tools.sh ruff)"
if [ -n "$ruff" ]; then
  args=(check --config tests/ruff.toml --output-format concise --quiet)
  [ $fix -eq 1 ] && args+=(--fix)
  out="$("$ruff" "${args[@]}" "${python[@]}" 2>&1)"
  report ruff $? "$out"
else
  skip ruff "it could not be installed here (see above)"
fi

if command -v shellcheck >/dev/null; then
  out="$(shellcheck --severity=warning --external-sources --format=gcc "${shell[@]}" 2>&1)"
  report shellcheck $? "$out"
else
  skip shellcheck "shellcheck is not installed (Debian: shellcheck)"
fi

echo "checks: ${#failed[@]} failed, ${#skipped[@]} skipped" \
  "(${#cxx[@]} C++, ${#python[@]} Python, ${#shell[@]} shell files)"
[ ${#failed[@]} -eq 0 ]
