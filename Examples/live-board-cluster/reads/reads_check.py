#!/usr/bin/env python3
"""Reads of a view through the cluster's nginx cache: any instance answers a read with the same bytes, a
token signed by one instance reads on every other, the cache hands an answer only to the token's own user,
and many long polls of one read cost the instances one request.

Run by check.sh against a started cluster (cluster.sh start).

    python3 reads/reads_check.py --web 127.0.0.1:8090 --instances 8091,8092,8093 --log DIR/reads.log
"""
import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


def get(base, path, user=None):
    request = urllib.request.Request(base + path)
    if user is not None:
        request.add_header("X-User", user)
    try:
        with urllib.request.urlopen(request, timeout=40) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def post(base, path, body, user=None):
    url = base + path + (f"?user={user}" if user else "")
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--web", required=True)
    parser.add_argument("--instances", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    web = f"http://{args.web}"
    instances = [f"http://127.0.0.1:{port}" for port in args.instances.split(",")]

    post(web, "/api/cards", {"id": "reads-own", "title": "Alice's reading list", "column": "todo", "private": True},
         user="alice")
    status, headers, body = get(web, "/read", user="alice")
    check(status == 200 and b"reading list" in body and headers["Cache-Control"] == "private, no-store",
          "alice's read by view through nginx: her cards, private")
    token, offset = headers["SimpleSource-Read-Token"], headers["Stream-Next-Offset"]
    written = post(web, "/api/cards", {"id": f"reads-{time.time_ns()}", "title": "Read everywhere", "column": "doing"})
    path = "/read?" + urllib.parse.urlencode({"token": token, "offset": offset})

    # Every instance answers the read with the same bytes, whichever instance signed the token.
    answers = []
    for instance in instances:
        # An instance answers once it holds the write (it reads the log up to an offset it has not reached).
        deadline = time.monotonic() + 10
        while True:
            status, headers, body = get(instance, path, user="alice")
            if b"Read everywhere" in body or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # the write is not there yet (its NOTIFY is on its way): read the offset again
        answers.append((status, headers["ETag"], body))
    check(all(a[0] == 200 for a in answers), f"every instance answers alice's token: {[a[0] for a in answers]}")
    check(len({(a[1], a[2]) for a in answers}) == 1, "every instance answers the read with the same bytes and tag")
    check(b"Read everywhere" in answers[0][2] and f'"to":{written["version"]}'.encode() in answers[0][2],
          "the answer carries the write, to its version")

    # Through nginx: kept, then handed only to alice.
    status, headers, first = get(web, path, user="alice")
    status2, headers2, second = get(web, path, user="alice")
    check(status == status2 == 200 and second == first and headers2["X-Cache-Status"] == "HIT",
          f"nginx keeps the answer: {headers['X-Cache-Status']}, then {headers2['X-Cache-Status']}")
    for user in ("bob", None):
        status, _, body = get(web, path, user=user)
        check(status == 403 and b"reading list" not in body and b"Read everywhere" not in body,
              f"{user or 'a guest'} with alice's token, from the warm cache: {status}")

    # Many long polls of one read at the newest version: one request reaches an instance.
    status, headers, _ = get(web, "/read")
    guest, tip = headers["SimpleSource-Read-Token"], headers["Stream-Next-Offset"]
    poll = "/read?" + urllib.parse.urlencode({"token": guest, "offset": tip, "live": "long-poll", "cursor": "1"})
    results = []
    lock = threading.Lock()

    def wait():
        answer = get(web, poll)
        with lock:
            results.append(answer)

    readers = [threading.Thread(target=wait) for _ in range(100)]
    for reader in readers:
        reader.start()
    time.sleep(1)  # most readers wait at nginx when the write comes; later ones are answered from the cache
    post(web, "/api/cards", {"id": f"reads-{time.time_ns()}", "title": "For every reader", "column": "done"})
    for reader in readers:
        reader.join()
    check(all(s == 200 and b"For every reader" in b for s, _, b in results), "100 long polls each got the write")
    time.sleep(0.2)  # nginx logs a request after its response
    with open(args.log) as log:
        reached = sum(1 for line in log if line.split(" ")[0] == poll and line.rstrip().rsplit(" ", 1)[-1] != "-")
    check(reached == 1, f"they cost the instances {reached} request(s)")
    print("reads check passed")


if __name__ == "__main__":
    main()
