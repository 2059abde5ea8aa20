"""Where an instance's CPU goes during a fan-out run: a `perf record -g` of the instances' CPU, its samples
bucketed by the frames on their stack, as microseconds per delivered message.

    bash fanout-load.sh --json --clients 1000 --seconds 40 &   # in one shell
    sleep 32; perf record -C 0 -g -o /tmp/fanout.perf -- sleep 10  # the middle of the writes
    python3 fanout/profile_buckets.py /tmp/fanout.perf --seconds 10 --messages-per-second 20000

A sample goes to the first bucket one of whose markers is on its stack (the event loops' writes, the broadcast's
loop over members, PostgresNIO, ...), under its thread's name. Idle samples (`swapper`) are not counted.
"""

import argparse
import collections
import subprocess

BUCKETS = [
    ("writes (event loops: NIO and the kernel)", "LoopQueueC5drain"),
    ("publishing to subscribers and their sinks", ("SubscriptionHub", "SubscriberMailbox", "HubLoops")),
    ("PostgresNIO", "PostgresNIO"),
    ("JSON encoding", "JSONEncoder"),
    ("JSON decoding", "JSONDecoder"),
    ("applying and projecting", "BasicData"),
    ("Hummingbird (HTTP writes)", "Hummingbird"),
    ("waiting for events", "epoll_wait"),
    ("event loop, other", "SelectableEventLoop"),
]


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
        bucket = next((name for name, markers in BUCKETS if any(m in block for m in as_tuple(markers))), "other")
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
