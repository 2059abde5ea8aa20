#!/usr/bin/env bash
# The live board's checks: its Swift tests (HTTP, WebSocket clients, resume, reset, bad input) and the
# browser check (headless Chromium through Selenium). Installs what the browser needs. Ends with
# "N passed, 0 failed", where the browser check is one of the N.
# Builds in $LIVE_BOARD_BUILD when it names a folder (CI's, which the cluster and the load lab share: their
# common dependencies are built once), in the package's own .build otherwise.
#   bash Examples/live-board/check.sh
set -euo pipefail
cd "$(dirname "$0")"
build=${LIVE_BOARD_BUILD:-$PWD/.build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== live-board: swift build"
swift build --build-tests --scratch-path "$build"

echo "== live-board: swift test"
swift test --skip-build --scratch-path "$build" 2>&1 | tee "$log"
summary=$(grep -E "Test run with [0-9]+ tests? .*passed" "$log" | tail -n 1)
passed=$(sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
[ -n "$passed" ] || { echo "live-board: no passing test run found"; exit 1; }

echo "== live-board: the browser check"
bash browser/install.sh
python3 browser/check_browser.py "$build/debug/live-board"

echo "$((passed + 1)) passed, 0 failed"
