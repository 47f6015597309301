#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times the phases of `make test` (and `make demo`), so that whoever wants it
# faster sees where its time goes.
#
#   tests/phase.sh run NAME -- COMMAND...   runs COMMAND, prints NAME's wall
#                                           time and records it in the log
#   tests/phase.sh start                    starts a new log
#   tests/phase.sh summary                  prints the log as a table, with
#                                           the total since `start`
#
# The log is $PHASE_LOG (default build/phases.txt): one line per phase,
# "<seconds>\t<status>\t<name>". A failed COMMAND is recorded as failed and
# its exit status returned, so make stops where it would have.
set -uo pipefail

log="${PHASE_LOG:-build/phases.txt}"

human() {
  local s=$1
  if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

case "${1:-}" in
  start)
    mkdir -p "$(dirname "$log")"
    printf 'start\t%s\n' "$(date +%s)" > "$log"
    ;;
  run)
    [ $# -ge 4 ] && [ "$3" = "--" ] || { echo "usage: $0 run NAME -- COMMAND..." >&2; exit 2; }
    name=$2
    shift 3
    mkdir -p "$(dirname "$log")"
    [ -f "$log" ] || printf 'start\t%s\n' "$(date +%s)" > "$log"
    printf '\n\033[1m== phase: %s\033[0m\n' "$name"
    begin=$(date +%s)
    "$@"
    status=$?
    took=$(($(date +%s) - begin))
    verdict=ok
    [ "$status" -eq 0 ] || verdict="failed ($status)"
    printf '%s\t%s\t%s\n' "$took" "$verdict" "$name" >> "$log"
    printf '\033[1m== phase: %s took %s (%s)\033[0m\n' "$name" "$(human "$took")" "$verdict"
    exit "$status"
    ;;
  summary)
    [ -f "$log" ] || { echo "no phases recorded in $log"; exit 0; }
    start=$(awk -F'\t' '$1 == "start" {print $2}' "$log")
    echo
    echo "Time per phase:"
    awk -F'\t' '$1 != "start" {printf "  %-44s %8s  %s\n", $3, $1 " s", $2}' "$log"
    if [ -n "$start" ]; then
      printf '  %-44s %8s  (%s)\n' "total, wall" "$(($(date +%s) - start)) s" \
        "$(human $(($(date +%s) - start)))"
    fi
    ;;
  *)
    echo "usage: $0 start | run NAME -- COMMAND... | summary" >&2
    exit 2
    ;;
esac
