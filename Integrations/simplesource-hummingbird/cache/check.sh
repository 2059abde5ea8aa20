#!/usr/bin/env bash
# Reads through a cache: notes-server behind nginx (nginx.conf.template), checked by cache_check.py. Installs
# nginx when missing (Debian, as root). Builds in $LIVE_BOARD_BUILD when it names a folder, in the package's
# own .build otherwise. Ends with "cache check passed".
#   bash Integrations/simplesource-hummingbird/cache/check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LIVE_BOARD_BUILD:-$PWD/.build}
origin_port=${ORIGIN_PORT:-18481}
nginx_port=${NGINX_PORT:-18480}

if ! command -v nginx >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "cache/check.sh: install nginx first (or run as root)" >&2; exit 1; }
  echo "cache/check.sh: installing nginx (apt-get)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi

swift build --product notes-server --scratch-path "$build" 2>&1 | tail -n 1
dir=$(mktemp -d)
chmod 777 "$dir"
server=""
cleanup() {
  [ -f "$dir/nginx.pid" ] && nginx -c "$dir/nginx.conf" -s stop 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

PORT=$origin_port READ_SECRET="the cache check's secret, 32 byte" READ_TOKEN_SECONDS=5 \
  "$build/debug/notes-server" >"$dir/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$origin_port/read" && break
  kill -0 "$server" 2>/dev/null || { cat "$dir/server.log"; exit 1; }
  sleep 0.1
done
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$nginx_port|g" -e "s|@ORIGIN@|127.0.0.1:$origin_port|g" \
  cache/nginx.conf.template >"$dir/nginx.conf"
nginx -c "$dir/nginx.conf"
NGINX_PORT=$nginx_port NGINX_LOG="$dir/access.log" NGINX_ERRORS="$dir/error.log" python3 cache/cache_check.py || {
  echo "--- nginx"; cat "$dir/error.log"; tail -n 40 "$dir/access.log"; echo "--- notes-server"; tail -n 20 "$dir/server.log"
  exit 1
}
