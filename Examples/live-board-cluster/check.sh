#!/usr/bin/env bash
# The cluster's checks: its Swift tests (a write against its deadline, explored exhaustively), then the fault
# tests. Installs PostgreSQL and nginx when they are missing (Debian, as root), builds board-instance,
# starts PostgreSQL, three instances and nginx on loopback (cluster.sh), runs cluster-check (kill -9 an
# instance, restart PostgreSQL, a failed transaction, an instance started late, a hung instance, a schedule
# of instance kills and PostgreSQL restarts under writers: $SCHEDULE_RESTARTS restarts, 5 by default; the
# oracle: scoped clients of named views, one stalled, under rolling kills), then
# nginx's limit per client address (limits/per_address_check.py), reads through nginx's cache
# (reads/reads_check.py), then the page offline in Chromium
# (browser/check_offline.py), stops them all and checks that nothing is left running.
# Prints the versions it ran and `N passed, 0 failed`, then stops the cluster and says that nothing is left
# running.
# Builds in $LIVE_BOARD_BUILD when it names a folder (as Examples/live-board/check.sh), in .build otherwise.
#   bash Examples/live-board-cluster/check.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
build=${LIVE_BOARD_BUILD:-$here/.build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== live-board-cluster: swift test"
swift build --build-tests --scratch-path "$build"
swift test --skip-build --scratch-path "$build" 2>&1 | tee "$log"
grep -qE "Test run with [0-9]+ tests? .*passed" "$log" || { echo "live-board-cluster: no passing test run"; exit 1; }

echo "== live-board-cluster: the fault tests"
bash cluster.sh install
export CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/live-board-cluster.XXXXXX)}
export CHECKPOINT_INTERVAL=${CHECKPOINT_INTERVAL:-16}
trap 'bash "$here/cluster.sh" stop >/dev/null 2>&1 || true; rm -f "$log"' EXIT
bash cluster.sh versions
bash cluster.sh start
status=0
timeout 900 "$build/debug/cluster-check" --script "$here/cluster.sh" --schedule-restarts "${SCHEDULE_RESTARTS:-5}" ||
  status=$?
# nginx's limit per client address: the WebSockets past it answered 429, a closed one's place taken again.
if [ "$status" -eq 0 ]; then
  timeout 120 python3 limits/per_address_check.py --web "127.0.0.1:${WEB_PORT:-8090}" --limit "${SOCKETS_PER_ADDRESS:-64}" ||
    status=$?
fi
# Reads through nginx's cache: the same bytes from every instance, handed only to the token's user, many
# long polls of one read for one request to the instances.
if [ "$status" -eq 0 ]; then
  timeout 120 python3 reads/reads_check.py --web "127.0.0.1:${WEB_PORT:-8090}" \
    --instances "$(( ${INSTANCE_PORT:-8090} + 1 )),$(( ${INSTANCE_PORT:-8090} + 2 )),$(( ${INSTANCE_PORT:-8090} + 3 ))" \
    --log "$CLUSTER_DIR/reads.log" || status=$?
fi
# The page offline in Chromium: three edits, a reload while offline, an instance killed, back online.
if [ "$status" -eq 0 ]; then
  bash ../live-board/browser/install.sh
  timeout 300 python3 browser/check_offline.py --web "127.0.0.1:${WEB_PORT:-8090}" --script "$here/cluster.sh" ||
    status=$?
fi
# Nothing of the cluster may outlive `stop`: its instances (named by PostgreSQL's address), nginx and
# PostgreSQL (named by the cluster's folder).
bash cluster.sh stop
left=$(pgrep -f -- "--postgres 127.0.0.1:${PG_PORT:-25432}/|$CLUSTER_DIR" || true)
if [ -n "$left" ]; then
  echo "cluster-check: still running after stop: $(echo $left)" >&2
  exit 1
fi
echo "cluster-check: nothing left running after stop"
exit $status
