#!/usr/bin/env bash
# The load run: a release live-board on loopback, then board-load with 1,000 WebSocket clients while 8
# writers edit by HTTP. Prints p50/p99 delivery latency, batches per client and the server's memory, and
# fails unless every client ends equal to the database. A benchmark, not a test.
#   bash Benchmarks/live-board-load/load.sh [--clients N] [--writers N] [--writes N] [--replicas checkpoints|every-record]
# With --replicas, every other client keeps a SQLite replica (BoardReplicaStore), and the run compares the
# time until clients with one and without hold each version. With --attackers N, N more WebSockets of one
# user subscribe 16 views each (compare with a run without: the control). With --stallers N, N users subscribe
# the same 16 views and never read; --viewers N, as many who read (the stallers' control).
# On two cores or more the server runs on CPU 0 and the clients on CPU 1 (taskset). $LIVE_BOARD_FLAGS go to the
# server (e.g. `--sockets-per-user 0`, to let the attackers in).
set -euo pipefail
cd "$(dirname "$0")"
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
board=../../Examples/live-board
swift build -c release --package-path "$board" --product live-board
swift build -c release --product board-load
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
# Every client comes from 127.0.0.1: no limit per address.
exec 3< <(exec "${pin_server[@]}" "$board/.build/release/live-board" --port "$port" --memory --sockets-per-address 0 \
  ${LIVE_BOARD_FLAGS:-} 2>&1)
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
read -r listening <&3   # printed once the server listens
echo "$listening"
"${pin_client[@]}" .build/release/board-load --port "$port" --server-pid "$server" "$@"
