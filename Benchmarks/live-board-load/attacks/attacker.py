"""One attack on a live-board server, until SIGTERM: raw WebSockets (no library) from chosen loopback
addresses, so that the server sees each address as a client of its own. It frames what it sends and reads
bytes only as far as an attack needs; it decodes nothing but a frame's head.

  python3 attacker.py --port P --attack NAME [--addresses 127.0.0.2,...]

Attacks:
  flood         200 sockets of three users, 16 views each (searches and windows), reading everything;
                a socket the server closes reconnects after 100 ms
  variants      64 sockets of four users from one address, 16 views each: case variants of one search
                and near misses of it (`c`, `ca`, `car`, ...), reading everything
  variants-4    the same from four addresses, 50 sockets each (four users per address)
  churn         32 loops, each connecting, subscribing 16 views no one holds, and closing at once
  churn-read    the same, reading the server's answer (or refusal) before closing
  resume-churn  churn-read, each subscribe resuming views no one holds from 1,000 versions back
  descriptors   1,100 silent TCP connections from one address, reopened when the server closes them

Prints `ready` once its connections are up (or after its first second of churn), and on SIGTERM closes
everything and prints one JSON line: cycles made, connections refused, connections open at the end.
"""
import argparse, asyncio, json, os, random, signal, string, struct, sys

HANDSHAKE = ("GET /live{query} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def frame(payload, opcode=1):
    """A masked client frame."""
    key = os.urandom(4)
    size = len(payload)
    head = bytes([0x80 | opcode])
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", size)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", size)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def subscribe(views, stream=None, version=None):
    message = {"format": "simplesource", "formatVersion": 3, "type": "subscribeViews",
               "views": {name: {"query": {"name": query, "parameters": parameters}}
                         for name, (query, parameters) in views.items()}}
    if stream is not None:
        message["stream"] = stream
        message["from"] = version
    return frame(json.dumps(message, separators=(",", ":")).encode())


CLOSE = frame(struct.pack(">H", 1000), 8)
# Searches and windows of the board, as board-load's attackers ask.
BOARD_VIEWS = {**{f"search{i}": ("search", {"text": str(i)}) for i in range(8)},
               **{f"top{i}": ("top", {"limit": i}) for i in range(1, 9)}}


def variant_views(rng):
    """Eight case variants of one search (the search ignores case) and eight near misses of it."""
    word = "card"
    variants = set()
    while len(variants) < 8:
        variants.add("".join(c.upper() if rng.random() < 0.5 else c for c in word))
    near = ["c", "ca", "car", "ard", "rd", "d", "a", "ar"]
    views = {f"v{i}": ("search", {"text": text}) for i, text in enumerate(sorted(variants))}
    views.update({f"n{i}": ("search", {"text": text}) for i, text in enumerate(near)})
    return views


def fresh_views(rng):
    """16 searches no one else holds."""
    return {f"f{i}": ("search", {"text": "".join(rng.choices(string.ascii_lowercase, k=6))}) for i in range(16)}


class Counts:
    def __init__(self):
        self.cycles = 0
        self.refused = 0
        self.open = 0


async def read_frame(reader):
    """The next frame's opcode and payload; raises at the end of the stream."""
    head = await reader.readexactly(2)
    size = head[1] & 0x7F
    if size == 126:
        size = struct.unpack(">H", await reader.readexactly(2))[0]
    elif size == 127:
        size = struct.unpack(">Q", await reader.readexactly(8))[0]
    return head[0] & 0x0F, await reader.readexactly(size)


async def open_socket(port, address, query):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0), limit=1 << 24)
    writer.write(HANDSHAKE.format(query=query).encode())
    return reader, writer


async def handshake(reader):
    """Reads the handshake's answer: True when upgraded."""
    head = await reader.readuntil(b"\r\n\r\n")
    return head.startswith(b"HTTP/1.1 101")


def close(writer):
    try:
        writer.write(CLOSE)
        writer.close()
    except Exception:
        pass


async def holder(port, address, query, views, counts, stop):
    """A socket that subscribes `views` and reads everything (answering pings) until stopped; reconnects
    100 ms after the server closes it."""
    while not stop.is_set():
        writer = None
        try:
            reader, writer = await open_socket(port, address, query)
            if not await handshake(reader):
                counts.refused += 1
                raise ConnectionError
            writer.write(subscribe(views))
            counts.cycles += 1
            counts.open += 1
            try:
                while not stop.is_set():
                    opcode, payload = await read_frame(reader)
                    if opcode == 9:
                        writer.write(frame(payload, 10))
                    elif opcode == 8:
                        counts.refused += 1
                        break
            finally:
                counts.open -= 1
        except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            if writer is not None:
                close(writer)
        if not stop.is_set():
            await asyncio.sleep(0.1)


async def churner(port, address, rng, counts, stop, read, resume):
    """Connects, subscribes 16 fresh views (resuming from 1,000 versions back with `resume`), closes; with
    `read`, reads the answer first. Over and over until stopped."""
    stream, version = None, None
    while not stop.is_set():
        writer = None
        try:
            reader, writer = await open_socket(port, address, f"?user=churn{rng.randrange(4)}")
            if resume and stream is None:
                # Learn the stream and its version once, from a subscribe of the whole board.
                if await handshake(reader):
                    writer.write(subscribe({"top": ("top", {"limit": 1})}))
                    while stream is None:
                        opcode, payload = await read_frame(reader)
                        if opcode == 1:
                            answer = json.loads(payload)
                            if answer.get("type") == "views":
                                stream, version = answer["stream"], answer["version"]
                        elif opcode == 8:
                            break
                continue
            frm = max(0, version - 1000) if resume and version is not None else None
            writer.write(subscribe(fresh_views(rng), stream if resume else None, frm))
            counts.cycles += 1
            if read:
                if not await handshake(reader):
                    counts.refused += 1
                    continue
                while True:
                    opcode, payload = await asyncio.wait_for(read_frame(reader), 10)
                    if opcode == 8:
                        counts.refused += 1
                        break
                    if opcode == 1:
                        break
        except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError,
                asyncio.LimitOverrunError):
            pass
        finally:
            if writer is not None:
                close(writer)
        await asyncio.sleep(0)


async def silent(port, address, counts, stop):
    """A TCP connection that sends nothing; reopened 100 ms after the server closes it."""
    while not stop.is_set():
        writer = None
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
            counts.cycles += 1
            counts.open += 1
            try:
                if await reader.read(1) == b"" and not stop.is_set():
                    counts.refused += 1
            finally:
                counts.open -= 1
        except OSError:
            pass
        finally:
            if writer is not None:
                writer.close()
        if not stop.is_set():
            await asyncio.sleep(0.1)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--attack", required=True)
    parser.add_argument("--addresses", default="127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5")
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    addresses = arguments.addresses.split(",")
    rng = random.Random(arguments.seed)
    counts, stop = Counts(), asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tasks = []
    attack = arguments.attack
    if attack == "flood":
        tasks = [holder(arguments.port, addresses[0], f"?user=flood{i % 3}", BOARD_VIEWS, counts, stop)
                 for i in range(200)]
    elif attack in ("variants", "variants-4"):
        spread = addresses[:1] if attack == "variants" else addresses[:4]
        per = 64 if attack == "variants" else 50
        tasks = [holder(arguments.port, address, f"?user=var{a}-{i % 4}", variant_views(rng), counts, stop)
                 for a, address in enumerate(spread) for i in range(per)]
    elif attack in ("churn", "churn-read", "resume-churn"):
        tasks = [churner(arguments.port, addresses[0], random.Random(rng.random()), counts, stop,
                         read=attack != "churn", resume=attack == "resume-churn") for _ in range(32)]
    elif attack == "descriptors":
        tasks = [silent(arguments.port, addresses[0], counts, stop) for _ in range(1100)]
    else:
        sys.exit(f"attacker: no attack {attack!r}")
    running = [asyncio.create_task(task) for task in tasks]
    await asyncio.sleep(3)  # connections up, or churn under way
    print("ready", flush=True)
    await stop.wait()
    open_at_end = counts.open
    await asyncio.wait(running, timeout=5)
    for task in running:
        task.cancel()
    print(json.dumps({"attack": attack, "cycles": counts.cycles, "refused": counts.refused,
                      "open_at_end": open_at_end}), flush=True)


asyncio.run(main())
