"""The cluster's limit per client address, through nginx: an address's WebSockets past SOCKETS_PER_ADDRESS are
answered 429, those within it upgrade, and a WebSocket closed frees its place.

  python3 limits/per_address_check.py --web 127.0.0.1:8090 [--limit 64]

Every socket is bounded by a timeout; exits 1 (naming what differed) when the counts are not as expected.
"""

import argparse
import socket
import sys

HANDSHAKE = (
    b"GET /live HTTP/1.1\r\nHost: board\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def status(host, port, held):
    """Opens a WebSocket, keeps it in `held` when it upgraded, and returns the status code."""
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(HANDSHAKE)
    head = b""
    while b"\r\n" not in head:
        chunk = sock.recv(256)
        if not chunk:
            break
        head += chunk
    code = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    if code == 101:
        held.append(sock)
    else:
        sock.close()
    return code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--web", default="127.0.0.1:8090")
    parser.add_argument("--limit", type=int, default=64)
    args = parser.parse_args()
    host, port = args.web.split(":")
    held = []
    codes = [status(host, int(port), held) for _ in range(args.limit + 2)]
    upgraded, refused = codes.count(101), codes.count(429)
    failures = []
    if (upgraded, refused) != (args.limit, 2):
        failures.append(f"{upgraded} upgraded and {refused} answered 429 of {len(codes)}, expected {args.limit} and 2")
    # A WebSocket closed frees its place (nginx counts open connections): the next one upgrades.
    held.pop().close()
    freed = None
    for _ in range(50):
        freed = status(host, int(port), held)
        if freed == 101:
            break
    if freed != 101:
        failures.append(f"after a close, a new WebSocket was answered {freed}")
    for sock in held:
        sock.close()
    if failures:
        print("per-address limit: " + "; ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"per-address limit: {args.limit} WebSockets of one address upgraded through nginx, the next 2 answered 429, "
          "and a closed one's place was taken again")


if __name__ == "__main__":
    main()
