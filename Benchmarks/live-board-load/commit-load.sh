#!/usr/bin/env bash
# Group commit against one transaction per edit, on SQLite and on PostgreSQL, in one run: for each store and
# each mode (`--commits group`, then `--commits per-edit`, twice over, alternating), a release server and
# board-load with many writers editing by HTTP at once and a few WebSocket clients following. Prints each
# run's edits per second and, per store, one JSON line:
#   {"store":"sqlite","group_edits_per_s":…,"per_edit_edits_per_s":…,"vs_per_edit":…,"group_versions_per_edit":…,"failures":…}
# where vs_per_edit is group commit's edits per second over one transaction per edit's (the better run of
# each), and group_versions_per_edit how many versions (groups) each edit cost with group commit.
# SQLite is a file in a temporary folder (WAL, synchronous FULL: a commit waits for the disk); PostgreSQL is
# the cluster (cluster.sh: fsync off), whose instance 1 takes the writers and clients directly while the
# other two follow the log. The servers (and PostgreSQL) run on CPU 0, the load
# generator on CPU 1 (taskset). A request refused (503) counts as a failure and its writer goes on: the
# JSON line gives the failures of the runs it took. A benchmark, not a test.
#   bash Benchmarks/live-board-load/commit-load.sh [--writers 32] [--writes 25] [--clients 10] [--stores sqlite,postgres]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
writers=32 writes=25 clients=10 stores=sqlite,postgres
while [ $# -gt 0 ]; do
  case "$1" in
    --writers) writers=$2; shift 2 ;;
    --writes) writes=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --stores) stores=$2; shift 2 ;;
    *) echo "usage: commit-load.sh [--writers N] [--writes N] [--clients N] [--stores sqlite,postgres]" >&2; exit 2 ;;
  esac
done
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
board=$(cd ../../Examples/live-board && pwd)
cluster=$(cd ../../Examples/live-board-cluster && pwd)
swift build -c release --product board-load >&2
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
work=$(mktemp -d /tmp/commit-load.XXXXXX)
chmod 755 "$work"   # PostgreSQL runs as its own user, in a folder inside it
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  [ -f "$work/cluster-up" ] && CLUSTER_DIR="$work/cluster" bash "$cluster/cluster.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Runs board-load against `port`; prints the edits per second and the versions made, as "EDITS VERSIONS".
load() {
  local port=$1 before after out
  before=$(curl -sf "http://127.0.0.1:$port/api/board" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  out=$("${pin_client[@]}" .build/release/board-load --port "$port" --clients "$clients" --writers "$writers" \
    --writes "$writes" ${server:+--server-pid "$server"}) || true
  echo "$out" | grep -v '^{' | sed 's/^/    /' >&2
  after=$(curl -sf "http://127.0.0.1:$port/api/board" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  echo "$out" | grep '^{' | python3 -c '
import json, sys
run = json.loads(sys.stdin.read())
assert run["equal"] == run["clients"], "a client did not end equal to the database"
made = run["writes"] - run["failures"]
print(made / (run["writers_ms"] / 1000), '"$((after - before))"', made, run["failures"])'
}

# Prints the JSON line of one store from "MODE EDITS VERSIONS" lines on stdin.
summary() {
  python3 -c '
import json, sys
store, writes = sys.argv[1], int(sys.argv[2])
best = {}
failures = 0
for line in sys.stdin:
    mode, edits, versions, made, failed = line.split()
    failures += int(failed)
    if float(edits) > best.get(mode, (0, 0, 1))[0]:
        best[mode] = (float(edits), int(versions), int(made))
group, per_edit = best["group"], best["per-edit"]
print(json.dumps({"store": store, "writers": int(sys.argv[3]), "writes": writes,
  "group_edits_per_s": round(group[0], 1), "per_edit_edits_per_s": round(per_edit[0], 1),
  "vs_per_edit": round(group[0] / per_edit[0], 2),
  "group_versions_per_edit": round(group[1] / group[2], 3), "failures": failures}))' "$1" "$((writers * writes))" "$writers"
}

if [[ ",$stores," == *",sqlite,"* ]]; then
  swift build -c release --package-path "$board" --product live-board >&2
  for round in 1 2; do
    for mode in group per-edit; do
      port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
      exec 3< <(exec "${pin_server[@]}" "$board/.build/release/live-board" --port "$port" \
        --db "$work/board-$mode-$round.sqlite" --sockets-per-address 0 --commits "$mode" 2>&1)
      server=$!
      read -r _ <&3   # printed once the server listens
      echo "== SQLite, --commits $mode (round $round)" >&2
      echo "$mode $(load "$port")" >>"$work/sqlite.runs"
      kill "$server"
      wait "$server" 2>/dev/null || true
      server=""
      exec 3<&-
    done
  done
  sed 's/^/  /' "$work/sqlite.runs" >&2
  summary sqlite <"$work/sqlite.runs"
fi

if [[ ",$stores," == *",postgres,"* ]]; then
  swift build -c release --package-path "$cluster" --product board-instance >&2
  # PostgreSQL beside the instances: on the load generator's core, its backends starve behind the generator's
  # threads and groups stall for seconds.
  export LIVE_BOARD="$cluster/.build/release/board-instance" INSTANCE_CPUS=0 PG_CPUS=0 SOCKETS_PER_ADDRESS=0
  export CLUSTER_DIR="$work/cluster"
  for round in 1 2; do
    for mode in group per-edit; do
      echo "== PostgreSQL, instance 1 of three, --commits $mode (round $round)" >&2
      touch "$work/cluster-up"
      INSTANCE_FLAGS="--commits $mode" bash "$cluster/cluster.sh" start >&2
      echo "$mode $(load "$((${INSTANCE_PORT:-8090} + 1))")" >>"$work/postgres.runs"
      bash "$cluster/cluster.sh" stop >/dev/null
      rm -f "$work/cluster-up"
    done
  done
  sed 's/^/  /' "$work/postgres.runs" >&2
  summary postgres <"$work/postgres.runs"
fi
