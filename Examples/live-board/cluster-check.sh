#!/usr/bin/env bash
# The cluster's fault tests: installs PostgreSQL and nginx when they are missing (Debian, as root), builds
# live-board, starts PostgreSQL, three instances and nginx on loopback (cluster.sh), runs cluster-check
# (kill -9 an instance, restart PostgreSQL, a failed transaction, an instance started late), stops them all.
# Prints the versions it ran and ends with `N passed, 0 failed`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v nginx >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "cluster-check: install postgresql and nginx-light first" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql nginx-light >/dev/null
fi
swift build --product live-board
swift build --product cluster-check
export CLUSTER_DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/live-board-cluster.XXXXXX)}
export CHECKPOINT_INTERVAL=${CHECKPOINT_INTERVAL:-16}
trap 'bash "$here/cluster.sh" stop' EXIT
bash cluster.sh versions
bash cluster.sh start
timeout 600 .build/debug/cluster-check --script "$here/cluster.sh"
