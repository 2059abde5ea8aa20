"""The fan-out load run over a running cluster (cluster.sh start): light clients, timed writes, server CPU.

For each client count: fanout-client opens that many WebSocket clients, spread evenly over the instances
(directly, not through nginx, so that nginx's work is not on the clients' core); once every client holds
its first message the instances' memory is read (idle connections); then one writer edits cards at a fixed
rate for a fixed time, each title `ts:<CLOCK_MONOTONIC ns>`, and the instances' CPU time (user + system,
from /proc) over the run is divided by the messages the clients received. With --floor, write-floor then
writes the same number of messages of the same mean size to as many loopback clients as one instance has,
at the same rate and on the same CPU: the kernel's own cost per message on this machine, measured in the
same run (`floor_cpu_us_per_message`, and `vs_floor`). With --nio-floor, nio-floor does the same through SwiftNIO
(one event loop, `writeAndFlush` on bare channels, which is the least a Hummingbird server's write costs):
`nio_floor_cpu_us_per_message` and `vs_nio_floor`. One JSON object per run.

Each run starts the instances again first (cluster.sh kill, start-instance), so that one run's memory
and caches are not the next one's. With --repeat K, each count is run K times, each run with its floors
measured right after it, and the run with the median `vs_nio_floor` is reported, with every run's ratio in
`vs_nio_floor_runs`: on a shared machine one run's floor and server may see different hours.

    python3 fanout_load.py --client BIN --script cluster.sh --cluster-dir DIR --clients 1000,5000
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")
CARDS = 8


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def request(connection, method, path, body):
    connection.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    return response.status


def restart_instances(args):
    """Starts every instance again, and returns their process ids."""
    pids = []
    for n in range(1, len(args.ports.split(",")) + 1):
        with open(os.path.join(args.cluster_dir, f"instance{n}.pid")) as f:
            old = int(f.read())
        subprocess.run(["bash", args.script, "kill", str(n)], check=True)
        # A process that held thousands of sockets takes a while to go, and keeps its port until it has.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{old}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break  # gone, and its sockets with it; only its parent's wait is left
            except FileNotFoundError:
                break
            time.sleep(0.1)
        subprocess.run(["bash", args.script, "start-instance", str(n)], check=True)
        with open(os.path.join(args.cluster_dir, f"instance{n}.pid")) as f:
            pids.append(int(f.read()))
    return pids


def write_and_collect(client, ports, rate, count):
    """Tells `client` to count, makes `count` writes at `rate` a second over the instances (each title
    `ts:<now>`), tells it the last one, and returns the writes refused and the client's JSON result."""
    client.stdin.write("go\n")
    client.stdin.flush()
    writers = [http.client.HTTPConnection("127.0.0.1", port) for port in ports]
    start = time.monotonic()
    last = 0
    refused = 0
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        last = time.monotonic_ns()
        status = request(writers[i % len(writers)], "PATCH", f"/api/cards/load-{i % CARDS}", {"title": f"ts:{last}"})
        refused += status != 200
    client.stdin.write(f"stop {last}\n")
    client.stdin.flush()
    return refused, json.loads(client.stdout.readline())


def run(args, clients):
    pids = restart_instances(args)
    rate = args.rate or args.messages_per_second / clients
    ports = [int(p) for p in args.ports.split(",")]
    rss_before = [rss_bytes(p) for p in pids]
    command = ["taskset", "-c", args.client_cpus, args.client, "--ports", args.ports, "--clients", str(clients)]
    client = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = client.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise RuntimeError(f"fanout-client did not get ready: {ready}")
    time.sleep(args.settle)  # connections idle: what they hold now is what an idle connection costs
    rss_idle = [rss_bytes(p) for p in pids]
    cpu_before = [cpu_seconds(p) for p in pids]
    count = int(rate * args.seconds)
    refused, result = write_and_collect(client, ports, rate, count)
    cpu = sum(cpu_seconds(p) for p in pids) - sum(cpu_before)
    client.wait()
    messages = max(result["messages"], 1)
    cpu_per_message = cpu * 1e6 / messages
    message_bytes = round(result["bytes"] / messages)
    floor = kernel_floor(args, clients // len(pids), count, rate, message_bytes) if args.floor else None
    nio_floor = nio_floor_cost(args, clients // len(pids), count, rate, message_bytes) if args.nio_floor else None
    return {
        "clients": clients,
        "instances": len(pids),
        "writes": count,
        "writes_per_second": rate,
        "writes_refused": refused,
        "connected": result["connected"],
        "messages": result["messages"],
        "resets": result["resets"],
        "clients_missing_last_write": result["missing_last_write"],
        "p50_ms": result["p50_ms"],
        "p99_ms": result["p99_ms"],
        "cpu_us_per_message": round(cpu_per_message, 2),
        "server_cpu_seconds": round(cpu, 2),
        "bytes_per_connection": round(sum(rss_idle) - sum(rss_before)) // max(clients, 1),
        "message_bytes": message_bytes,
        "floor_cpu_us_per_message": floor,
        "vs_floor": round(cpu_per_message / floor, 2) if floor else None,
        "nio_floor_cpu_us_per_message": nio_floor,
        "vs_nio_floor": round(cpu_per_message / nio_floor, 2) if nio_floor else None,
    }


def nginx_pids(args):
    """nginx's master and its worker (not its cache loader, which exits a minute after nginx starts)."""
    with open(os.path.join(args.cluster_dir, "nginx.pid")) as f:
        master = int(f.read())
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    workers = []
    for child in children:
        try:
            with open(f"/proc/{child}/cmdline") as f:
                if "worker process" in f.read():
                    workers.append(int(child))
        except FileNotFoundError:
            pass
    return [master] + workers


def origin_reads(args):
    """The reads that reached an instance so far: the lines of nginx's log of reads with an upstream."""
    try:
        with open(os.path.join(args.cluster_dir, "reads.log")) as f:
            return sum(1 for line in f if line.rstrip().rsplit(" ", 1)[-1] != "-")
    except FileNotFoundError:
        return 0


def run_http(args, clients):
    """The --http run: `clients` readers long-poll one view (the board, as guests) through nginx's cache, one
    writer edits at `--rate` writes a second; the instances' and nginx's CPU over the messages the readers
    received, and the requests that reached an instance per version written."""
    pids = restart_instances(args)
    web = http.client.HTTPConnection("127.0.0.1", args.web_port)
    web.request("GET", "/read")
    first = web.getresponse()
    first.read()
    if first.status != 200:
        raise RuntimeError(f"the first read: HTTP {first.status}")
    token, offset = first.getheader("SimpleSource-Read-Token"), first.getheader("Stream-Next-Offset")
    proxies = nginx_pids(args)
    rss_before = sum(rss_bytes(p) for p in proxies)
    command = ["taskset", "-c", args.client_cpus, args.longpoll_client, "--port", str(args.web_port),
               "--clients", str(clients), "--token", token, "--offset", offset]
    client = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = client.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise RuntimeError(f"longpoll-client did not get ready: {ready}")
    time.sleep(args.settle)  # every reader's long poll waits at nginx now: what it holds is what one costs
    rss_waiting = sum(rss_bytes(p) for p in proxies)
    cpu_before = [cpu_seconds(p) for p in pids]
    proxy_before = sum(cpu_seconds(p) for p in proxies)
    reads_before = origin_reads(args)
    rate = args.rate or 20
    count = int(rate * args.seconds)
    refused, result = write_and_collect(client, [int(p) for p in args.ports.split(",")], rate, count)
    cpu = sum(cpu_seconds(p) for p in pids) - sum(cpu_before)
    proxy_cpu = sum(cpu_seconds(p) for p in proxies) - proxy_before
    client.wait()
    reads = origin_reads(args) - reads_before
    messages = max(result["messages"], 1)
    return {
        "transport": "http",
        "clients": clients,
        "instances": len(pids),
        "writes": count,
        "writes_per_second": rate,
        "writes_refused": refused,
        "connected": result["connected"],
        "messages": result["messages"],
        "requests": result["requests"],
        "answers_204": result["answers_204"],
        "answers_other": result["answers_other"],
        "clients_missing_last_write": result["missing_last_write"],
        "p50_ms": result["p50_ms"],
        "p99_ms": result["p99_ms"],
        "origin_requests": reads,
        "origin_requests_per_version": round(reads / max(count, 1), 2),
        "origin_cpu_us_per_message": round(cpu * 1e6 / messages, 3),
        "origin_cpu_seconds": round(cpu, 2),
        "proxy_cpu_us_per_message": round(proxy_cpu * 1e6 / messages, 3),
        "proxy_cpu_seconds": round(proxy_cpu, 2),
        "proxy_bytes_per_waiting_client": round((rss_waiting - rss_before) / max(clients, 1)),
        "message_bytes": round(result["bytes"] / messages),
    }


def descriptor_limit(pid):
    """The soft limit of open files of process `pid`."""
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise RuntimeError(f"no descriptor limit for {pid}")


def run_idle(args, clients):
    """The --idle run: `clients` WebSocket clients of one instance (the first), from client processes of at
    most --clients-per-process each, each bound to a loopback address of its own (127.0.0.2, .3, ...), so
    that neither a process's descriptors nor a source address's ports run out. Once every client holds its
    first message and they idle for --settle seconds, the instance's memory over what it held before they
    came, per client; then a new client's subscribe is timed (connect, upgrade, subscribe, first message),
    while they stay connected; then one write a second for --seconds, which every client must receive:
    p50 is the median of the processes' medians, p99 the largest of their 99th percentiles."""
    pids = restart_instances(args)
    server, port = pids[0], args.ports.split(",")[0]
    rss_before = rss_bytes(server)
    processes = []
    left, index = clients, 0
    while left > 0:
        count = min(left, args.clients_per_process)
        command = ["taskset", "-c", args.client_cpus, args.client, "--ports", port, "--clients", str(count),
                   "--source", f"127.0.0.{2 + index}"]
        processes.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        left -= count
        index += 1
    held = 0
    for process in processes:
        ready = process.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError(f"fanout-client did not get ready: {ready}")
        held += int(ready[1])
    time.sleep(args.settle)  # every client idle: what they hold now is what an idle connection costs
    rss_idle = rss_bytes(server)
    start = time.monotonic()
    probe = subprocess.Popen(
        ["taskset", "-c", args.client_cpus, args.client, "--ports", port, "--clients", "1", "--source", "127.0.0.1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    probe_ready = probe.stdout.readline().split()
    subscribe_ms = (time.monotonic() - start) * 1e3
    probe.stdin.close()
    probe.wait()
    if probe_ready != ["ready", "1"]:
        raise RuntimeError(f"the new client's subscribe was not answered: {probe_ready}")
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    cpu_before = cpu_seconds(server)
    writer = http.client.HTTPConnection("127.0.0.1", int(port))
    count = int(args.seconds)
    begin = time.monotonic()
    last, refused = 0, 0
    for i in range(count):
        delay = begin + i - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        last = time.monotonic_ns()
        status = request(writer, "PATCH", f"/api/cards/load-{i % CARDS}", {"title": f"ts:{last}"})
        refused += status != 200
    for process in processes:
        process.stdin.write(f"stop {last}\n")
        process.stdin.flush()
    results = [json.loads(process.stdout.readline()) for process in processes]
    cpu = cpu_seconds(server) - cpu_before
    for process in processes:
        process.wait()
    messages = sum(result["messages"] for result in results)
    p50s = sorted(result["p50_ms"] for result in results)
    return {
        "mode": "idle",
        "clients": clients,
        "client_processes": len(processes),
        "clients_held": held,
        "descriptor_limit": descriptor_limit(server),
        "idle_bytes_per_connection": round((rss_idle - rss_before) / max(held, 1)),
        "subscribe_ms": round(subscribe_ms, 1),
        "writes": count,
        "writes_refused": refused,
        "messages": messages,
        "clients_missing_last_write": sum(result["missing_last_write"] for result in results),
        "p50_ms": p50s[len(p50s) // 2],
        "p99_ms": max(result["p99_ms"] for result in results),
        "us_per_message": round(cpu * 1e6 / max(messages, 1), 2),
    }


def kernel_floor(args, clients, rounds, rate, message_bytes):
    """The CPU per message of a C server that only write()s the same messages to as many loopback clients
    as one instance has, at the same rate, pinned as the instances are (write-floor.c): the kernel's share,
    measured in the same run."""
    command = [args.floor, "--clients", str(clients), "--rounds", str(rounds), "--rate", str(max(1, round(rate))),
               "--bytes", str(max(1, message_bytes)), "--server-cpu", args.server_cpu,
               "--reader-cpu", args.client_cpus.split(",")[0]]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output)["cpu_us_per_message"]


def nio_floor_cost(args, clients, rounds, rate, message_bytes):
    """The CPU per message of a SwiftNIO server that only writes the same messages (nio-floor, its clients
    write-floor's reader), pinned as the instances are: what NIO itself costs, measured in the same run."""
    command = ["taskset", "-c", args.server_cpu, args.nio_floor, "--reader", args.floor, "--clients", str(clients),
               "--rounds", str(rounds), "--rate", str(max(1, round(rate))), "--bytes", str(max(4, message_bytes)),
               "--reader-cpu", args.client_cpus.split(",")[0]]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output)["cpu_us_per_message"]


def median_run(results):
    """The run whose `vs_nio_floor` is the median of `results` (the lower middle one of an even count), with
    every run's ratio in `vs_nio_floor_runs`; the single run, unchanged, when there is one."""
    if len(results) == 1:
        return results[0]
    ranked = sorted(results, key=lambda result: result["vs_nio_floor"] or 0)
    chosen = dict(ranked[(len(ranked) - 1) // 2])
    chosen["repeats"] = len(results)
    chosen["vs_nio_floor_runs"] = [result["vs_nio_floor"] for result in results]
    return chosen


def missed(result):
    """Whether a run failed: a client missed the last write, or a write was refused."""
    return result["clients_missing_last_write"] > 0 or result["writes_refused"] > 0


def report(args, result, text):
    """Prints `result`, as one JSON object with --json and as `text` otherwise; returns ``missed(result)``."""
    print(json.dumps(result) if args.json else text, flush=True)
    return missed(result)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", required=True)
    parser.add_argument("--cluster-dir", required=True)
    parser.add_argument("--script", required=True, help="cluster.sh")
    parser.add_argument("--ports", default="8091,8092,8093")
    parser.add_argument("--clients", default="1000,5000")
    parser.add_argument("--rate", type=float, help="writes per second (default: --messages-per-second / clients)")
    parser.add_argument("--messages-per-second", type=float, default=20000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--settle", type=float, default=2)
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--server-cpu", default="0", help="the instances' CPU, where write-floor's server runs")
    parser.add_argument("--floor", help="write-floor: also measure the kernel's floor per message")
    parser.add_argument("--nio-floor", help="nio-floor: also measure SwiftNIO's floor per message (needs --floor)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per client count, each with its floors; the median vs_nio_floor is reported")
    parser.add_argument("--http", action="store_true",
                        help="long-poll readers through nginx's cache (--rate 20 by default), then the WebSocket "
                             "run at the same count, side by side")
    parser.add_argument("--longpoll-client", help="longpoll-client, for --http")
    parser.add_argument("--idle", help="idle clients of one instance, one run per count (e.g. 10000,19000), "
                                       "instead of the --clients runs")
    parser.add_argument("--clients-per-process", type=int, default=8000,
                        help="for --idle: the most clients one fanout-client process opens")
    parser.add_argument("--web-port", type=int, default=8090, help="nginx's port, for --http")
    args = parser.parse_args()
    setup = http.client.HTTPConnection("127.0.0.1", int(args.ports.split(",")[0]))
    for i in range(CARDS):
        status = request(setup, "POST", "/api/cards", {"id": f"load-{i}", "title": "waiting", "column": "todo"})
        if status not in (201, 409):
            raise RuntimeError(f"creating load-{i}: HTTP {status}")
    failed = False
    for clients in [int(c) for c in args.idle.split(",")] if args.idle else []:
        result = run_idle(args, clients)
        failed |= report(
            args, result,
            f"{result['clients_held']} of {clients} idle clients held by one instance (descriptor limit "
            f"{result['descriptor_limit']}): {result['idle_bytes_per_connection']} bytes each, a new "
            f"client's subscribe answered in {result['subscribe_ms']} ms; one write a second: p50 "
            f"{result['p50_ms']} ms, p99 {result['p99_ms']} ms, {result['us_per_message']} us of CPU per "
            f"message, {result['clients_missing_last_write']} clients missing the last write")
    for clients in [int(c) for c in args.clients.split(",")] if not args.idle else []:
        if args.http:
            reads = run_http(args, clients)
            # The WebSocket path at the same count, in the same run: its rate is its own (--messages-per-second).
            http_rate, args.rate = args.rate, None
            sockets = run(args, clients)
            args.rate = http_rate
            failed |= missed(sockets)
            reads["websocket_cpu_us_per_message"] = sockets["cpu_us_per_message"]
            reads["websocket_vs_nio_floor"] = sockets["vs_nio_floor"]
            reads["websocket_p50_ms"] = sockets["p50_ms"]
            reads["websocket_p99_ms"] = sockets["p99_ms"]
            failed |= report(
                args, reads,
                f"{clients} readers through nginx, {reads['writes']} writes at {reads['writes_per_second']:g}/s: "
                f"p50 {reads['p50_ms']} ms, p99 {reads['p99_ms']} ms, {reads['origin_requests_per_version']} "
                f"origin requests per version, {reads['origin_cpu_us_per_message']} us of instance CPU and "
                f"{reads['proxy_cpu_us_per_message']} us of nginx's per message, "
                f"{reads['proxy_bytes_per_waiting_client']} bytes at nginx per waiting reader; over "
                f"WebSockets: {sockets['cpu_us_per_message']} us per message "
                f"({sockets['vs_nio_floor']}x the NIO floor)")
            continue
        runs = [run(args, clients) for _ in range(max(1, args.repeat))]
        failed |= any(missed(result) for result in runs)
        result = median_run(runs)
        failed |= report(
            args, result,
            f"{clients} clients on {result['instances']} instances, {result['writes']} writes at "
            f"{result['writes_per_second']:g}/s: p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
            f"{result['cpu_us_per_message']} us of server CPU per message "
            f"(a write()-only C server: {result['floor_cpu_us_per_message']} us, "
            f"the same through SwiftNIO: {result['nio_floor_cpu_us_per_message']} us), "
            f"{result['bytes_per_connection']} bytes per idle connection")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
