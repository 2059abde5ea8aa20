#!/usr/bin/env bash
# Runs the live board as a cluster on loopback: PostgreSQL (initdb in a temporary folder), three instances
# (board-instance) following one log in it, and nginx in front of them at one address.
#
#   bash cluster.sh start            # installs PostgreSQL and nginx when missing (Debian, as root), builds
#                                    # board-instance, starts them all; prints the address; state in $CLUSTER_DIR
#                                    # (default /tmp/live-board-cluster)
#   bash cluster.sh stop             # stops nginx, every instance (also those of start-instance) and PostgreSQL:
#                                    # SIGTERM, then SIGKILL after $STOP_SECONDS (10); says what it stopped,
#                                    # fails if anything is left; then removes the folder (copying the
#                                    # logs to $KEEP_LOGS first, when set)
#   bash cluster.sh kill N           # kill -9 instance N (1-3)
#   bash cluster.sh pause N          # SIGSTOP instance N: it hangs, its sockets stay open
#   bash cluster.sh resume N         # SIGCONT instance N
#   bash cluster.sh start-instance N # starts instance N again (with the binary `start` used)
#   bash cluster.sh restart-postgres # restarts PostgreSQL (fast shutdown: every connection drops)
#   bash cluster.sh psql ARGS...     # psql on the board's database
#
#   bash cluster.sh install          # only installs PostgreSQL and nginx when missing
#
# Ports: nginx $WEB_PORT (8090), instances $INSTANCE_PORT+1..3 (8091-8093), PostgreSQL $PG_PORT (25432: below the
# kernel's ephemeral ports, 32768-60999, which a client's connection may hold when PostgreSQL starts).
# The instances are .build/debug/board-instance (in $LIVE_BOARD_BUILD when it names a build folder) unless
# $LIVE_BOARD names another binary; `start` builds it.
# $INSTANCE_CPUS and $PG_CPUS, when set, pin the instances, and PostgreSQL and nginx, to those CPUs (taskset -c).
# $INSTANCE_FLAGS go to each instance (e.g. `--commits per-edit`).
# $SOCKETS_PER_ADDRESS (64) bounds the WebSockets one client address holds through nginx (limit_conn; past it
# the upgrade is answered 429); 0: no limit. The instances see only nginx's address, so they limit nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${CLUSTER_DIR:-/tmp/live-board-cluster}
web=${WEB_PORT:-8090}
base=${INSTANCE_PORT:-8090}
pgport=${PG_PORT:-25432}
checkpoint=${CHECKPOINT_INTERVAL:-500}
sockets_per_address=${SOCKETS_PER_ADDRESS:-64}
build=${LIVE_BOARD_BUILD:-$here/.build}
binary=${LIVE_BOARD:-$build/debug/board-instance}
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

# PostgreSQL and nginx from Debian's packages, when missing: the one command works on a fresh machine.
install() {
  if [ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] && command -v nginx >/dev/null; then return 0; fi
  [ "$(id -u)" = 0 ] || { echo "cluster.sh: install postgresql and nginx-light first (or run as root)" >&2; exit 1; }
  echo "cluster.sh: installing PostgreSQL and nginx (apt-get)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql nginx-light >/dev/null
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
}

# Stops the process in pid file $2 (named $1): SIGTERM, then SIGKILL once $STOP_SECONDS pass; says which.
stop_pid() {
  local name=$1 file=$2 pid
  [ -f "$file" ] || return 0
  pid=$(head -n 1 "$file")
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then rm -f "$file"; return 0; fi
  # A paused instance takes SIGTERM only once it runs again.
  kill -CONT "$pid" 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((10 * ${STOP_SECONDS:-10}))); do
    kill -0 "$pid" 2>/dev/null || { echo "stopped $name (pid $pid)"; rm -f "$file"; return 0; }
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then echo "could not stop $name (pid $pid)" >&2; return 1; fi
  echo "killed $name (pid $pid) after ${STOP_SECONDS:-10} s"
  rm -f "$file"
}

postgres_start() {
  (close_inherited; as_postgres "${pg_pin[@]}" "$pgbin/pg_ctl" -D "$dir/pg" -l "$dir/postgres.log" -w -t 30 \
    -o "-h 127.0.0.1 -p $pgport -k $dir/pg -c max_connections=200 -c fsync=off" start >/dev/null)
}

instance_start() {
  local n=$1
  # The binary the cluster was started with: an instance started again runs the same build, whatever the
  # caller's environment names.
  local program=$binary
  [ -s "$dir/binary" ] && program=$(cat "$dir/binary")
  (
    close_inherited
    # Every instance signs read tokens with one secret (a real deployment keeps its own out of the script).
    export READ_SECRET=${READ_SECRET:-"the live board cluster's read secret"}
    exec "${instance_pin[@]}" "$program" --port $((base + n)) --postgres "127.0.0.1:$pgport/board" --checkpoint "$checkpoint" \
      --sockets-per-address 0 --ping 4 ${INSTANCE_FLAGS:-} </dev/null >>"$dir/instance$n.log" 2>&1
  ) &
  echo $! >"$dir/instance$n.pid"
  for _ in $(seq 1 300); do
    curl -sf --max-time 2 "http://127.0.0.1:$((base + n))/api/board" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$dir/instance$n.pid")" 2>/dev/null || { cat "$dir/instance$n.log" >&2; return 1; }
    sleep 0.1
  done
  echo "instance $n did not start" >&2
  return 1
}

case "${1:-}" in
  install) install ;;
  start)
    install
    [ -x "$binary" ] || (cd "$here" && swift build --scratch-path "$build" --product board-instance >/dev/null)
    rm -rf "$dir" && mkdir -p "$dir/nginx" && chmod 777 "$dir" "$dir/nginx"
    echo "$binary" >"$dir/binary"
    as_postgres "$pgbin/initdb" -D "$dir/pg" -A trust -U postgres >/dev/null
    postgres_start
    "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U postgres board
    for n in 1 2 3; do instance_start "$n"; done
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 32768; }
http {
  access_log off;
  # Reads of a view (/read): kept by URL (token, offset, cursor), one request to an instance for all the
  # readers of one read, and each reader's use of its token checked with an instance first (SimpleSource's
  # Reading through a cache). The log of reads counts the requests that reached an instance.
  log_format reads '\$request_uri \$status \$upstream_cache_status \$upstream_addr';
  proxy_cache_path $dir/nginx/reads keys_zone=reads:10m levels=1:2 max_size=256m inactive=10m use_temp_path=off;
  proxy_cache_path $dir/nginx/allowed keys_zone=allowed:4m max_size=16m inactive=10m use_temp_path=off;
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
  limit_conn_zone \$binary_remote_addr zone=per_address:10m;
  limit_conn_status 429;
  server {
    listen 127.0.0.1:$web;
    # Every request is answered within 8 s when an instance hangs: reads then go to another instance,
    # writes are answered 504 (their outcome unknown: the client sends them again with the same id).
    proxy_connect_timeout 3s;
    proxy_send_timeout 8s;
    proxy_read_timeout 8s;
    # The live connections: open for as long as their clients stay. An instance pings each WebSocket every
    # 4 s (--ping): one that sends nothing for 10 s has hung, and its clients' WebSockets are closed, so
    # that they resume on another instance within the bound writes have.
    location /live {
      proxy_pass http://board;
      proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade;
      proxy_set_header Connection \$connection_upgrade;
      proxy_read_timeout 10s;
      proxy_next_upstream error timeout http_502 http_503;
      $([ "$sockets_per_address" -gt 0 ] && echo "limit_conn per_address $sockets_per_address;")
    }
    location = /read {
      access_log $dir/reads.log reads;
      set \$read_token \$arg_token;
      auth_request /allowed;
      proxy_pass http://board;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache reads;
      proxy_cache_key \$request_uri;
      # A long poll holds the lock up to the instances' hold (20 s): the lock and the read outlast it.
      proxy_cache_lock on;
      proxy_cache_lock_timeout 25s;
      proxy_cache_lock_age 25s;
      proxy_cache_use_stale updating;
      proxy_cache_revalidate on;
      proxy_read_timeout 30s;
      proxy_next_upstream error timeout http_502 http_503;
      add_header X-Cache-Status \$upstream_cache_status always;
    }
    location = /allowed {
      internal;
      proxy_pass http://board/read-authorization;
      proxy_http_version 1.1;
      proxy_pass_request_body off;
      proxy_set_header Connection "";
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI \$request_uri;
      proxy_cache allowed;
      proxy_cache_key "\$read_token|\$http_x_user";
      proxy_read_timeout 5s;
    }
    # A write is never sent again to another instance: the first may have made it (a DELETE resent after
    # its instance died would be answered 404 for the client's own delete).
    location / {
      error_page 418 = @write;
      if (\$request_method !~ ^(GET|HEAD)\$) { return 418; }
      proxy_pass http://board;
      proxy_http_version 1.1;
      proxy_next_upstream error timeout http_502 http_503;
    }
    location @write {
      proxy_pass http://board;
      proxy_http_version 1.1;
      proxy_next_upstream off;
    }
  }
}
CONF
    (close_inherited; exec "${pg_pin[@]}" nginx -c "$dir/nginx.conf" -p "$dir" -q)
    echo "live-board cluster: http://127.0.0.1:$web/ (instances $((base + 1))-$((base + 3)), PostgreSQL $pgport; $dir)"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    left=0
    stop_pid nginx "$dir/nginx.pid" || left=1
    for file in "$dir"/instance*.pid; do
      [ -e "$file" ] || continue
      name=$(basename "$file" .pid)
      stop_pid "${name/instance/instance }" "$file" || left=1
    done
    # PostgreSQL's postmaster: its pid is the first line of postmaster.pid; SIGTERM is a smart shutdown,
    # so ask pg_ctl for a fast one first.
    if [ -f "$dir/pg/postmaster.pid" ]; then
      as_postgres "$pgbin/pg_ctl" -D "$dir/pg" -m fast -t "${STOP_SECONDS:-10}" -w stop >/dev/null 2>&1 || true
      cp "$dir/pg/postmaster.pid" "$dir/postgres.pid" 2>/dev/null && stop_pid PostgreSQL "$dir/postgres.pid" || true
      [ -f "$dir/pg/postmaster.pid" ] || echo "stopped PostgreSQL"
    fi
    [ "$left" = 0 ] || { echo "cluster.sh stop: something is still running; $dir kept" >&2; exit 1; }
    # $KEEP_LOGS: a folder the logs are copied to before the cluster's folder goes.
    [ -z "${KEEP_LOGS:-}" ] || { mkdir -p "$KEEP_LOGS" && cp "$dir"/*.log "$KEEP_LOGS"/ 2>/dev/null || true; }
    rm -rf "$dir"
    ;;
  kill) kill -9 "$(cat "$dir/instance$2.pid")" ;;
  pause) kill -STOP "$(cat "$dir/instance$2.pid")" ;;
  resume) kill -CONT "$(cat "$dir/instance$2.pid")" ;;
  start-instance) instance_start "$2" ;;
  restart-postgres) as_postgres "$pgbin/pg_ctl" -D "$dir/pg" -m fast -w stop >/dev/null && postgres_start ;;
  psql) shift; "$pgbin/psql" -h 127.0.0.1 -p "$pgport" -U postgres -d board -v ON_ERROR_STOP=1 -q "$@" ;;
  versions)
    "$pgbin/postgres" --version
    nginx -v 2>&1
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
