#!/usr/bin/env bash
# The seeded schedules' catalogue figures: for each planted bug, how many of N plain runs catch it (each a
# process of its own, as `swift test` runs it), and how many seeded schedules find it, in what time, shrunk
# to how many preemptions; then the overhead of one run under a schedule against a plain run.
#   bash Benchmarks/schedules/catalogue.sh [--runs N]     # N plain runs per bug (default 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=200
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N]" >&2; exit 2 ;;
  esac
done
swift build --build-tests >/dev/null
binary="$(swift build --show-bin-path)/SimpleSourcePackageTests.xctest"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== $runs plain runs of each planted bug (a process each; a hang is caught after 1 s)"
for _ in $(seq "$runs"); do
  SIMPLESOURCE_PLANTED_PLAIN_RUN=1 "$binary" --testing-library swift-testing --filter plainRun 2>/dev/null |
    grep -a "plain run of" >> "$out" || true
done
for bug in $(sed -E 's/plain run of ([A-Za-z]+):.*/\1/' "$out" | sort -u); do
  caught=$(grep -c "plain run of $bug: caught" "$out" || true)
  echo "plain $bug: caught in $caught of $runs runs"
done
echo "== seeded schedules (up to 1,000 per bug)"
"$binary" --testing-library swift-testing --filter "ScheduleCatalogueTests/plantedBugIsFound" 2>/dev/null |
  grep -a "^catalogue "
echo "== overhead of a run under a schedule (release build)"
swift build -c release --product simplesource-bench >/dev/null
"$(swift build -c release --show-bin-path)/simplesource-bench" --case schedule-overhead --iterations 9 |
  grep -a "^schedule-overhead"
