#!/usr/bin/env bash
# The fan-out load run: the cluster (PostgreSQL, three release instances of the board, nginx; the cluster package's cluster.sh)
# with light WebSocket clients (fanout/fanout-client.c: one C process that frames, counts and timestamps,
# never decodes) spread over the instances, and one writer editing cards at a fixed rate. The instances are
# pinned to CPU 0; PostgreSQL, nginx, the clients and the writer to CPU 1. For each client count it prints
# p50/p99 delivery, the instances' CPU time per delivered message and their memory per idle connection, and
# the floors: what a C server that only write()s the same messages costs per message (write-floor.c), and a
# SwiftNIO server that only writes them (nio-floor).
# With --http, readers long-poll one view through nginx's cache instead (fanout/longpoll-client.c), at 20
# writes a second unless --rate says otherwise: the requests that reach an instance per version, the
# instances' and nginx's CPU per message the readers received, nginx's memory per waiting reader, and, side by
# side, the WebSocket run at the same count.
# With --idle N[,N...], one instance holds N idle clients (from processes of 8,000 clients at most, each on a
# loopback address of its own): its memory per idle connection, how long a new client's subscribe takes
# meanwhile, and one write a second that every client must receive (p50/p99, CPU per message). A process
# holds at most its descriptor limit (`ulimit -Hn`) of connections, less the server's reserve.
# With --repeat K, each count runs K times, each with its floors, and the median vs_nio_floor is reported.
# A benchmark, not a test. Installs PostgreSQL and nginx when they are missing (Debian, as root).
#   bash Benchmarks/live-board-load/fanout-load.sh [--json] [--http] [--clients 1000,5000] [--rate 20] [--seconds 10] [--repeat 3]
#   bash Benchmarks/live-board-load/fanout-load.sh [--json] --idle 10000,19000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v nginx >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "fanout-load: install postgresql and nginx-light first" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql nginx-light >/dev/null
fi
cluster=$(cd ../../Examples/live-board-cluster && pwd)
swift build -c release --package-path "$cluster" --product board-instance >&2
swift build -c release --product nio-floor >&2
mkdir -p .build
cc -O2 -Wall -o .build/fanout-client fanout/fanout-client.c
cc -O2 -Wall -o .build/write-floor fanout/write-floor.c
cc -O2 -Wall -o .build/longpoll-client fanout/longpoll-client.c
export CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/live-board-fanout.XXXXXX)}
export LIVE_BOARD="$cluster/.build/release/board-instance" INSTANCE_CPUS=0 PG_CPUS=1
# Every client comes from 127.0.0.1: no limit per address.
export SOCKETS_PER_ADDRESS=0
# The cluster's stop reports on stderr: stdout carries the JSON alone, and a reader that closes it early
# (`| head -1`) does not kill the stop halfway.
trap 'bash "$cluster/cluster.sh" stop >&2' EXIT
bash "$cluster/cluster.sh" start >&2
taskset -c 1 python3 fanout/fanout_load.py --client .build/fanout-client --floor .build/write-floor \
  --nio-floor .build/release/nio-floor --longpoll-client .build/longpoll-client \
  --script "$cluster/cluster.sh" \
  --cluster-dir "$CLUSTER_DIR" "$@"
