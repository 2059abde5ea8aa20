"""Where an instance's CPU goes during a fan-out run: a `perf record -g` of the instances' CPU, its samples
bucketed by the frames on their stack, as microseconds per delivered message.

    bash fanout-load.sh --json --clients 1000 --seconds 40 &   # in one shell
    sleep 32; perf record -C 0 -g -o /tmp/fanout.perf -- sleep 10  # the middle of the writes
    python3 fanout/profile_buckets.py /tmp/fanout.perf --seconds 10 --messages-per-second 20000

A sample goes to the first bucket one of whose markers is on its stack (the event loops' writes, the broadcast's
loop over members, PostgresNIO, ...), under its thread's name. Idle samples (`swapper`) are not counted. A
marker `module:M` matches a frame of a symbol that module defines (its mangled name starts with it): a closure
of ours over a library's types names the library inside its own name, and is ours, not the library's.
"""

import argparse
import collections
import re
import subprocess

BUCKETS = [
    ("writes (event loops: NIO and the kernel)", "LoopQueueC5drain"),
    ("publishing to subscribers and their sinks", ("SubscriptionHub", "SubscriberMailbox", "HubLoops")),
    ("applying and projecting", "BasicData"),
    ("JSON encoding", "JSONEncoder"),
    ("JSON decoding", "JSONDecoder"),
    ("PostgresNIO", ("module:PostgresNIO", "module:_ConnectionPoolModule")),
    ("Hummingbird (HTTP writes)", ("module:Hummingbird", "module:HummingbirdCore")),
    ("the cluster's writer and follower, other", "module:BoardCluster"),
    ("waiting for events", "epoll_wait"),
    ("event loop, other", "SelectableEventLoop"),
]


def mangled_module(symbol):
    """The module a mangled Swift symbol (`$s11PostgresNIO…`) belongs to, or None."""
    match = re.match(r"\$s(\d+)", symbol)
    if not match:
        return None
    start = match.end()
    return symbol[start:start + int(match.group(1))]


def matches(marker, frames):
    """Whether `marker` is on the stack: a substring of a frame, or `module:M`, a frame of module M's."""
    if marker.startswith("module:"):
        module = marker[len("module:"):]
        return any(mangled_module(frame) == module for frame in frames)
    return any(marker in frame for frame in frames)


def as_tuple(markers):
    """A bucket's markers: one string, or several (any of them on the stack)."""
    return markers if isinstance(markers, tuple) else (markers,)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("perf_data")
    parser.add_argument("--seconds", type=float, required=True, help="how long perf recorded")
    parser.add_argument("--messages-per-second", type=float, required=True, help="delivered messages per second")
    args = parser.parse_args()
    script = subprocess.run(["perf", "script", "-i", args.perf_data], capture_output=True, text=True, check=True)
    counts = collections.Counter()
    samples = 0
    for block in script.stdout.split("\n\n"):
        lines = block.strip().split("\n")
        if not lines or not lines[0].strip():
            continue
        samples += 1
        thread = lines[0].split()[0]
        if thread == "swapper":
            continue
        frames = [line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "" for line in lines[1:]]
        bucket = next(
            (name for name, markers in BUCKETS if any(matches(m, frames) for m in as_tuple(markers))), "other")
        counts[(thread, bucket)] += 1
    if samples == 0:
        raise SystemExit("no samples")
    # Each sample stands for an equal share of the recorded CPU time (one CPU for `seconds`).
    per_sample_us = args.seconds * 1e6 / samples
    messages = args.seconds * args.messages_per_second
    total = 0.0
    for (thread, bucket), count in counts.most_common():
        us = count * per_sample_us / messages
        total += us
        print(f"{us:6.2f} us/message  {thread:18} {bucket}")
    print(f"{total:6.2f} us/message  in all (the instances' CPU: user, system and interrupts on their CPU)")


if __name__ == "__main__":
    main()
