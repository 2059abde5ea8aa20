"""Opens and closes WebSocket connections to a live-board server, one after another, and reads the server's
resident memory (VmRSS) between phases: a warm-up, a pause for the server to finish with the last
connections (a WebSocket's pings are a timer of its event loop, cancelled as it closes: nothing is left to
fire later), then the measured cycles and the same pause. A connection that left anything behind makes the second run grow. Each cycle: the handshake, a subscribe, the reset read, a close frame, the close.
The client only reads bytes until it sees what it waits for; it decodes nothing.

  python3 connection_cycles.py --port P --pid PID [--warmup CYCLES] [--cycles 20000] [--pause 5]
          [--limit-kb 1024] [--json]

Exits 1 when the memory after the measured cycles is more than --limit-kb above its level after warm-up,
and a second round of as many cycles, run only then, grows it by more than --limit-kb again (a leak grows
every round; a one-off step of the allocator does not).
"""
import argparse, json, os, socket, struct, sys, time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def masked(payload, opcode):
    key = os.urandom(4)
    head = bytes([0x80 | opcode])
    head += bytes([0x80 | len(payload)]) if len(payload) < 126 else bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


SUBSCRIBE = masked(b'{"format":"simplesource","formatVersion":2,"type":"subscribe"}', 1)
CLOSE = masked(struct.pack(">H", 1000), 8)
HANDSHAKE = (b"GET /live HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def cycle(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(HANDSHAKE)
        got = b""
        while b"\r\n\r\n" not in got:
            got += s.recv(65536)
        if not got.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"handshake refused: {got[:40]!r}")
        s.sendall(SUBSCRIBE)
        got = got.partition(b"\r\n\r\n")[2]
        while b'"type":"reset"' not in got:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("closed before the reset")
            got += chunk
        s.sendall(CLOSE)
        while s.recv(65536):
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=None, help="cycles before the measured ones (default: as many)")
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--pause", type=float, default=5)
    parser.add_argument("--limit-kb", type=int, default=1024)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    start = rss_kb(arguments.pid)
    # The warm-up makes as many connections as the measured run, so that the allocator has grown to what
    # that many closed connections' pending timers take at once; the measured run must then take nothing.
    warmup = arguments.cycles if arguments.warmup is None else arguments.warmup
    warm_began = time.monotonic()
    for _ in range(warmup):
        cycle(arguments.port)
    warm_rate = warmup / max(time.monotonic() - warm_began, 1e-3)
    time.sleep(arguments.pause)
    warm = rss_kb(arguments.pid)
    # At most 90% of the warm-up's rate: connections the server is still finishing at once (closes,
    # anything a connection's end leaves for a moment) then never outnumber the warm-up's, so the
    # allocator's high-water mark is the warm-up's and any growth is what connections left behind.
    interval = 1 / (0.9 * warm_rate)

    def measured_round():
        began = time.monotonic()
        for index in range(arguments.cycles):
            cycle(arguments.port)
            ahead = began + (index + 1) * interval - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        seconds = time.monotonic() - began
        peak = rss_kb(arguments.pid)
        time.sleep(arguments.pause)
        return seconds, peak, rss_kb(arguments.pid)

    seconds, peak, after = measured_round()
    result = {
        "cycles": arguments.cycles, "cycles_per_second": round(arguments.cycles / seconds),
        "rss_start_kb": start, "rss_after_warmup_kb": warm, "rss_at_end_of_cycles_kb": peak,
        "rss_after_kb": after, "growth_kb": after - warm,
        "growth_bytes_per_connection": round((after - warm) * 1024 / arguments.cycles, 1),
    }
    growth = after - warm
    if growth > arguments.limit_kb:
        # Over the limit: a second round tells a leak from a one-off step of the allocator (a new arena,
        # pages it keeps). What connections leave behind grows again by as much; a step does not recur.
        _, _, again = measured_round()
        result["second_round_growth_kb"] = again - after
        growth = min(growth, again - after)
    if arguments.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    ok = growth <= arguments.limit_kb
    rounds = "" if "second_round_growth_kb" not in result else f", {result['second_round_growth_kb']:+d} KB in a second round"
    print(f"connection cycles: {'1 passed, 0 failed' if ok else '0 passed, 1 failed'}"
          f" (resident memory {after - warm:+d} KB after {arguments.cycles} connections{rounds};"
          f" limit {arguments.limit_kb} KB)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
