#!/usr/bin/env bash
# SimpleSourceHummingbird's checks: its build (warnings fail), its tests (the browser client's model in Node,
# 1,000 rounds), and its README quoting the notes-server example as it is. Ends with "N passed, 0 failed".
# Builds in $LIVE_BOARD_BUILD when it names a folder (CI's, which the live board and its cluster share:
# their common dependencies are built once), in the package's own .build otherwise.
#   bash Integrations/simplesource-hummingbird/check.sh
set -euo pipefail
cd "$(dirname "$0")"
build=${LIVE_BOARD_BUILD:-$PWD/.build}
log=$(mktemp)
quoted=$(mktemp)
trap 'rm -f "$log" "$quoted"' EXIT

echo "== simplesource-hummingbird: swift build (warnings fail)"
swift build --build-tests --scratch-path "$build" 2>&1 | tee "$log"
if grep -E "^/.*/(Sources|Tests)/.*warning:" "$log"; then
  echo "simplesource-hummingbird: the build warned (above)"
  exit 1
fi

echo "== simplesource-hummingbird: swift test"
# Node runs the browser client's model test (without it the test is skipped, and says so).
if ! command -v node >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null
fi
command -v node >/dev/null || echo "simplesource-hummingbird: no node; the browser client's model test is skipped"
export WIRE_CLIENT_ROUNDS=${WIRE_CLIENT_ROUNDS:-1000}
swift test --skip-build --scratch-path "$build" 2>&1 | tee "$log"
summary=$(grep -E "Test run with [0-9]+ tests? .*passed" "$log" | tail -n 1)
passed=$(sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
[ -n "$passed" ] || { echo "simplesource-hummingbird: no passing test run found"; exit 1; }

echo "== simplesource-hummingbird: the README quotes notes-server as it is"
# The first Swift block of the README.
awk '/^```swift$/ { inside = 1; next } /^```$/ && inside { exit } inside { print }' README.md >"$quoted"
diff -u Sources/notes-server/main.swift "$quoted"

echo "$((passed + 1)) passed, 0 failed"
