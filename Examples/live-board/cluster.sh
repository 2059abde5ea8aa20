#!/usr/bin/env bash
# Runs live-board as a cluster on loopback: PostgreSQL (initdb in a temporary folder), three instances of
# live-board following one log in it, and nginx in front of them at one address.
#
#   bash cluster.sh start            # prints the address; state in $CLUSTER_DIR (default /tmp/live-board-cluster)
#   bash cluster.sh stop             # stops nginx, the instances and PostgreSQL, and removes the folder
#   bash cluster.sh kill N           # kill -9 instance N (1-3)
#   bash cluster.sh start-instance N # starts instance N again
#   bash cluster.sh restart-postgres # restarts PostgreSQL (fast shutdown: every connection drops)
#   bash cluster.sh psql ARGS...     # psql on the board's database
#
# Ports: nginx $WEB_PORT (8090), instances $INSTANCE_PORT+1..3 (8091-8093), PostgreSQL $PG_PORT (55432).
# The instances are .build/debug/live-board unless $LIVE_BOARD names another binary; `start` builds it.
# $INSTANCE_CPUS and $PG_CPUS, when set, pin the instances and PostgreSQL to those CPUs (taskset -c).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${CLUSTER_DIR:-/tmp/live-board-cluster}
web=${WEB_PORT:-8090}
base=${INSTANCE_PORT:-8090}
pgport=${PG_PORT:-55432}
checkpoint=${CHECKPOINT_INTERVAL:-500}
binary=${LIVE_BOARD:-$here/.build/debug/live-board}
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# PostgreSQL refuses to run as root: run its programs as the postgres user then, from a folder it may read.
as_postgres() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
instance_pin=() && [ -n "${INSTANCE_CPUS:-}" ] && instance_pin=(taskset -c "$INSTANCE_CPUS")
pg_pin=() && [ -n "${PG_CPUS:-}" ] && pg_pin=(taskset -c "$PG_CPUS")

# Closes every descriptor this (sub)shell inherited but the standard ones, before it starts a server: what it
# leaves running must not hold a caller's pipe open, or a caller that learns of this script's end from it
# closing (Foundation's Process on Linux) is never told.
close_inherited() {
  for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
  return 0
}

postgres_start() {
  (close_inherited; as_postgres "${pg_pin[@]}" "$pgbin/pg_ctl" -D "$dir/pg" -l "$dir/postgres.log" -w -t 30 \
    -o "-h 127.0.0.1 -p $pgport -k $dir/pg -c max_connections=200 -c fsync=off" start >/dev/null)
}

instance_start() {
  local n=$1
  (
    close_inherited
    exec "${instance_pin[@]}" "$binary" --port $((base + n)) --postgres "127.0.0.1:$pgport/board" --checkpoint "$checkpoint" \
      </dev/null >>"$dir/instance$n.log" 2>&1
  ) &
  echo $! >"$dir/instance$n.pid"
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$((base + n))/api/board" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$dir/instance$n.pid")" 2>/dev/null || { cat "$dir/instance$n.log" >&2; return 1; }
    sleep 0.1
  done
  echo "instance $n did not start" >&2
  return 1
}

case "${1:-}" in
  start)
    [ -n "$pgbin" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
    command -v nginx >/dev/null || { echo "nginx is not installed (apt-get install nginx-light)" >&2; exit 1; }
    [ -x "$binary" ] || (cd "$here" && swift build --product live-board >/dev/null)
    rm -rf "$dir" && mkdir -p "$dir/nginx" && chmod 777 "$dir" "$dir/nginx"
    as_postgres "$pgbin/initdb" -D "$dir/pg" -A trust -U postgres >/dev/null
    postgres_start
    "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres board
    for n in 1 2 3; do instance_start "$n"; done
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path $dir/nginx/body;
  proxy_temp_path $dir/nginx/proxy;
  fastcgi_temp_path $dir/nginx/fastcgi;
  uwsgi_temp_path $dir/nginx/uwsgi;
  scgi_temp_path $dir/nginx/scgi;
  upstream board {
    server 127.0.0.1:$((base + 1)) max_fails=1 fail_timeout=3s;
    server 127.0.0.1:$((base + 2)) max_fails=1 fail_timeout=3s;
    server 127.0.0.1:$((base + 3)) max_fails=1 fail_timeout=3s;
  }
  map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
  server {
    listen 127.0.0.1:$web;
    location / {
      proxy_pass http://board;
      proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade;
      proxy_set_header Connection \$connection_upgrade;
      proxy_read_timeout 1h;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
CONF
    (close_inherited; exec nginx -c "$dir/nginx.conf" -p "$dir" -q)
    echo "live-board cluster: http://127.0.0.1:$web/ (instances $((base + 1))-$((base + 3)), PostgreSQL $pgport; $dir)"
    ;;
  stop)
    [ -f "$dir/nginx.pid" ] && nginx -c "$dir/nginx.conf" -p "$dir" -s stop 2>/dev/null || true
    for n in 1 2 3; do [ -f "$dir/instance$n.pid" ] && kill "$(cat "$dir/instance$n.pid")" 2>/dev/null || true; done
    [ -d "$dir/pg" ] && as_postgres "$pgbin/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  kill) kill -9 "$(cat "$dir/instance$2.pid")" ;;
  start-instance) instance_start "$2" ;;
  restart-postgres) as_postgres "$pgbin/pg_ctl" -D "$dir/pg" -m fast -w stop >/dev/null && postgres_start ;;
  psql) shift; "$pgbin/psql" -h 127.0.0.1 -p "$pgport" -U postgres -d board -v ON_ERROR_STOP=1 -q "$@" ;;
  versions)
    "$pgbin/postgres" --version
    nginx -v 2>&1
    ;;
  *)
    sed -n '2,14p' "$0"
    exit 2
    ;;
esac
