#!/usr/bin/env bash
# Others' time to see an edit while one client attacks the board, each attack against a control in the
# same run. For each attack: a fresh release live-board at its default limits (server pinned to CPU 0),
# then `board-load` (50 guests following the board from 127.0.0.1 while 4 writers make 50 writes each by
# HTTP) alone, the control; then a fresh server, the attacker (attacks/attacker.py, raw WebSockets from
# 127.0.0.2-5, which the server sees as addresses of their own) and the same `board-load` beside it
# (clients and attacker on CPU 1). After the writes the attacker closes everything; 5 s later the server's
# resident memory is read again.
#   bash Benchmarks/live-board-load/attacks.sh [--json] [--attacks flood,variants,...] [--rounds N]
# Attacks: flood, variants, variants-4, churn, churn-read, resume-churn, descriptors (attacks/attacker.py
# says what each does; `descriptors` runs its server and its control's at `ulimit -n 1024`). With --rounds N
# (1 by default), each attack and its control run N times, interleaved, and the medians are reported.
# Prints a line per attack, or with --json one JSON array: an object per attack with `attack`,
# `p50_vs_control`, `p99_vs_control`, `rss_after_close_mib`, the runs' p50/p99 in ms, the server's
# memory before the attack and at its peak, and what the attacker made and had refused.
# A benchmark, not a test.
set -euo pipefail
cd "$(dirname "$0")"
json=0
attacks=flood,variants,variants-4,churn,churn-read,resume-churn,descriptors
rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=1 ;;
    --attacks) attacks=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "usage: attacks.sh [--json] [--attacks A,B] [--rounds N]" >&2; exit 2 ;;
  esac
  shift
done
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
board=../../Examples/live-board
swift build -c release --package-path "$board" --product live-board >&2
swift build -c release --product board-load >&2
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
say() { echo "$@" >&2; }
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
work=$(mktemp -d)
server="" attacker=""
cleanup() {
  [ -n "$attacker" ] && kill "$attacker" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# One run of ROUND for FOR: ATTACK (or `none`) with the server's descriptor limit FILES (or `inherit`);
# prints one JSON object.
run() {
  local for=$1 round=$2 attack=$3 files=$4 port before peak after load attacked="null"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # The server's output goes to a file: a pipe no one reads would stop a server that logs.
  ([ "$files" = inherit ] || ulimit -n "$files"; exec "${pin_server[@]}" "$board/.build/release/live-board" \
    --port "$port" --memory) > "$work/server.log" 2>&1 &
  server=$!
  until grep -q listening "$work/server.log"; do   # printed once the server listens
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
  done
  before=$(rss_mib "$server")
  if [ "$attack" != none ]; then
    exec 4< <(exec nice -n 19 "${pin_client[@]}" python3 attacks/attacker.py --port "$port" --attack "$attack")
    attacker=$!
    read -r _ <&4   # `ready`
  fi
  load=$("${pin_client[@]}" .build/release/board-load --port "$port" --clients 50 --writers 4 --writes 50 \
    --server-pid "$server" | tail -n 200 | grep '^{"clients"' || echo '{}')
  peak=$(rss_mib "$server")
  if [ -n "$attacker" ]; then
    kill -TERM "$attacker"
    attacked=$(grep -m1 '^{' <&4 || echo null)
    wait "$attacker" 2>/dev/null || true
    attacker=""
    exec 4<&-
  fi
  sleep 5
  after=$(rss_mib "$server")
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
  python3 - "$for" "$round" "$attack" "$load" "$before" "$peak" "$after" "$attacked" <<'PY'
import json, sys
attacked_for, round_, attack, load, before, peak, after, attacked = sys.argv[1:]
load = json.loads(load)
print(json.dumps({"for": attacked_for, "round": int(round_), "attack": attack, "p50_ms": load.get("p50_ms"), "p99_ms": load.get("p99_ms"),
                  "equal": load.get("equal"), "failures": load.get("failures"),
                  "rss_before_mib": float(before), "rss_peak_mib": float(peak), "rss_after_close_mib": float(after),
                  "attacker": json.loads(attacked)}))
PY
}

results=$work/results.jsonl
for attack in ${attacks//,/ }; do
  files=inherit
  [ "$attack" = descriptors ] && files=1024
  for round in $(seq "$rounds"); do
    say "attacks: $attack, round $round: control"
    run "$attack" "$round" none "$files" >> "$results"
    say "attacks: $attack, round $round: attack"
    run "$attack" "$round" "$attack" "$files" >> "$results"
  done
done

python3 - "$results" "$json" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
json_out = sys.argv[2] == "1"
report = []
for attack in dict.fromkeys(run["for"] for run in runs):
    def median(kind, key):
        values = [run[key] for run in runs if run["for"] == attack and (run["attack"] == "none") == (kind == "control")
                  and run[key] is not None]
        return statistics.median(values) if values else None
    control50, control99 = median("control", "p50_ms"), median("control", "p99_ms")
    p50, p99 = median("attack", "p50_ms"), median("attack", "p99_ms")
    attacked = [run for run in runs if run["for"] == attack and run["attack"] != "none"]
    entry = {
        "attack": attack,
        "p50_vs_control": round(p50 / control50, 2) if p50 and control50 else None,
        "p99_vs_control": round(p99 / control99, 2) if p99 and control99 else None,
        "rss_after_close_mib": median("attack", "rss_after_close_mib"),
        "p50_ms": p50, "p99_ms": p99, "control_p50_ms": control50, "control_p99_ms": control99,
        "rss_before_mib": median("attack", "rss_before_mib"), "rss_peak_mib": median("attack", "rss_peak_mib"),
        "control_rss_after_close_mib": median("control", "rss_after_close_mib"),
        "clients_equal": [run["equal"] for run in attacked], "attacker": [run["attacker"] for run in attacked],
    }
    report.append(entry)
    if not json_out:
        print(f"{attack}: others' p50 {p50:.1f} ms ({entry['p50_vs_control']}x the control's {control50:.1f}),"
              f" p99 {p99:.1f} ms ({entry['p99_vs_control']}x {control99:.1f});"
              f" server {entry['rss_before_mib']} -> {entry['rss_peak_mib']} MiB, {entry['rss_after_close_mib']} MiB"
              f" 5 s after the attack closed (control: {entry['control_rss_after_close_mib']});"
              f" attacker {entry['attacker']}")
if json_out:
    print(json.dumps(report, indent=1))
PY
