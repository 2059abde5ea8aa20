#!/usr/bin/env bash
# Memory per WebSocket connection: a live-board server on loopback (pinned to CPU 0 with taskset), and a
# client on CPU 1 that opens and closes 20,000 WebSockets one after another (handshake, subscribe, reset,
# close; memory/connection_cycles.py). Fails unless the server's resident memory after them, once its
# per-connection timers have fired, is within 1 MB of its level after a warm-up; over it, a second round of
# as many connections must grow it by less than 1 MB (a leak grows every round, an allocator's step once).
#   bash Benchmarks/live-board-load/memory-check.sh [--debug] [--cycles N] [--json]
set -euo pipefail
cd "$(dirname "$0")"
configuration=release
arguments=()
for argument in "$@"; do
  case "$argument" in
    --debug) configuration=debug ;;
    *) arguments+=("$argument") ;;
  esac
done
# The board's own build (CI has made it already, for the board's tests, in $LIVE_BOARD_BUILD).
board=../../Examples/live-board
build=${LIVE_BOARD_BUILD:-$board/.build}
swift build -c "$configuration" --package-path "$board" --scratch-path "$build" --product live-board
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
exec 3< <(exec "${pin_server[@]}" "$build/$configuration/live-board" --port "$port" --memory \
  --sockets-per-address 0 2>&1)
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
read -r listening <&3
echo "$listening ($configuration build)"
"${pin_client[@]}" python3 memory/connection_cycles.py --port "$port" --pid "$server" "${arguments[@]}"
