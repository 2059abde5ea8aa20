#!/usr/bin/env bash
# Bugs of the package's own history, each put back in a scratch copy of the repository: how many plain runs
# of the suite's test catch it, and after how many seeded schedules the same test under schedules does.
#   bash Benchmarks/schedules/history.sh [--runs N] [--hang S]   # N plain runs per bug (default 200); a
#                                                                 # plain run still going after S s (10) is caught
# Each patch in history/ names, in its first lines, the plain test and the seeded one:
#   held-versions-not-reported: a version that no batch carries (edits that cancelled out while the
#     consumer lagged) is not held, so a wait for it hangs until a later batch comes, or forever.
#   scope-change-outside-its-turn: a scope change does not wait for a subscribe in progress, which then
#     leaves the client on the old scope's subscription.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=200
hang=10
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --hang) hang="$2"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--hang S]" >&2; exit 2 ;;
  esac
done
declare -A plain=(
  [held-versions-not-reported]="ProgressTests/randomized"
  [scope-change-outside-its-turn]="WireScopeTests/racingChanges\$"
)
declare -A seeded=(
  [held-versions-not-reported]="ProgressTests/underSeededSchedules"
  [scope-change-outside-its-turn]="WireScopeTests/racingChangesUnderSchedules"
)
# One random run per plain process, as the README's `swift test` runs them at their smallest.
export SIMPLESOURCE_PROGRESS_RUNS=1 SIMPLESOURCE_WIRE_CASES=1
for bug in held-versions-not-reported scope-change-outside-its-turn; do
  scratch=$(mktemp -d)
  git archive HEAD | tar -x -C "$scratch"
  patch -s -d "$scratch" -p1 < "Benchmarks/schedules/history/$bug.patch"
  (
    cd "$scratch"
    swift build --build-tests >/dev/null 2>&1
    binary="$(swift build --show-bin-path)/SimpleSourcePackageTests.xctest"
    caught=0
    for _ in $(seq "$runs"); do
      timeout "$hang" "$binary" --testing-library swift-testing --filter "${plain[$bug]}" >/dev/null 2>&1 ||
        caught=$((caught + 1))
    done
    echo "$bug: plain ${plain[$bug]} caught it in $caught of $runs runs (a hang of $hang s counts as caught)"
    start=$SECONDS
    "$binary" --testing-library swift-testing --filter "${seeded[$bug]}" 2>&1 |
      sed 's/\x1b\[[0-9;]*m//g' | grep -a "found after\|shrunk to\|explored" | cut -c1-160 | head -2 || true
    echo "$bug: seeded ${seeded[$bug]} ran in $((SECONDS - start)) s, shrinking included"
  )
  rm -rf "$scratch"
done
