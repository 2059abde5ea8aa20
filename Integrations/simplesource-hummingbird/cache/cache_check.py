"""Reads through nginx's cache in front of notes-server: what a cache may hand out, and to whom.

Run by check.sh, which starts notes-server (tokens issued per 5 s) and nginx (nginx.conf.template).
Prints one line per check; exits non-zero at the first that fails.
"""
import base64
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

NGINX = "http://127.0.0.1:%s" % os.environ["NGINX_PORT"]
LOG = os.environ["NGINX_LOG"]


def get(path, user=None, if_none_match=None, timeout=40):
    request = urllib.request.Request(NGINX + path)
    if user is not None:
        request.add_header("X-User", user)
    if if_none_match is not None:
        request.add_header("If-None-Match", if_none_match)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def post_note(text, user=None):
    request = urllib.request.Request(NGINX + "/notes", data=text.encode(), method="POST")
    if user is not None:
        request.add_header("X-User", user)
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201, response.status


def read_path(**items):
    return "/read?" + urllib.parse.urlencode([(k, v) for k, v in items.items() if v is not None])


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        sys.exit(1)


def origin_requests(path):
    """The requests nginx made to the origin for `path` (its access log, after nginx wrote it)."""
    with open(LOG) as log:
        return sum(1 for line in log if line.split(" ")[0] == path and "origin=-" not in line)


# A user's first read names the view: private, never kept, with a token for the next reads.
post_note("Ann's diary", user="ann")
status, headers, body = get("/read", user="ann")
check(status == 200 and b"Ann's diary" in body, "ann's read by view holds her notes")
check(headers["Cache-Control"] == "private, no-store", "a read by view is private: " + headers["Cache-Control"])
token, offset = headers["SimpleSource-Read-Token"], headers["Stream-Next-Offset"]
status, _, _ = get("/read", user="ann")
check(status == 200, "read again by view, it is still answered by the origin")

# Ann's reads by token are kept by the cache, and the second is a hit.
post_note("The cache's first note", user="ann")
path = read_path(token=token, offset=offset)
status, headers, first = get(path, user="ann")
check(status == 200 and b"first note" in first, "ann's read by token holds the new note")
check(headers["X-Cache-Status"] == "MISS", "the first read by token is a miss: " + headers["X-Cache-Status"])
status, headers, second = get(path, user="ann")
check(status == 200 and headers["X-Cache-Status"] == "HIT" and second == first, "the second is a hit, the same bytes")
status, headers, _ = get(path, user="ann", if_none_match=headers["ETag"])
check(status == 304, "revalidated by its tag: 304")

# Another user, a guest, a forged token: nothing, though the cache holds the answer.
for user, who in (("bob", "another user"), (None, "a guest"), ("", "unreadable credentials")):
    status, _, body = get(path, user=user)
    check(status in (401, 403) and b"diary" not in body and b"first note" not in body,
          "%s with ann's token from a warm cache: %d, nothing of the view" % (who, status))
payload, code = token.split(".")
forged = payload + "." + ("A" if code[0] != "A" else "B") + code[1:]
status, _, body = get(read_path(token=forged, offset=offset), user="ann")
check(status == 403 and b"first note" not in body, "a forged token: 403")
status, _, body = get("/read?token=" + token + "&offset=nope", user="ann")
check(status == 400, "a read that does not parse: 400 (%d)" % status)

# Many readers of one read at the newest version: one request to the origin, one answer for all.
status, headers, _ = get("/read", user=None)
guest_token, tip = headers["SimpleSource-Read-Token"], headers["Stream-Next-Offset"]
poll = read_path(token=guest_token, offset=tip, live="long-poll", cursor="1")
answers = []
lock = threading.Lock()


def wait_for_change():
    result = get(poll, user=None)
    with lock:
        answers.append(result)


readers = [threading.Thread(target=wait_for_change) for _ in range(int(os.environ.get("READERS", "200")))]
for reader in readers:
    reader.start()
# Most readers are waiting when the write comes; any that arrive later are answered from the cache: the
# count below holds either way, so this is no verdict, only the common order.
time.sleep(1)
post_note("A note for every reader")
for reader in readers:
    reader.join()
check(all(s == 200 and b"every reader" in b for s, _, b in answers),
      "%d long polls of one read each got the new note" % len(answers))
time.sleep(0.2)  # nginx writes its log line after the response
check(origin_requests(poll) == 1, "they cost the origin %d request(s)" % origin_requests(poll))

# A token past its end reads nothing, even where the cache held its answers.
end = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["end"]
# The token's end is wall-clock time, and a cache counts whole seconds: wait for the second after it.
time.sleep(max(0, end - time.time()) + 2)
status, _, body = get(path, user="ann")
check(status == 403 and b"first note" not in body, "ann's token past its end: 403 (%d)" % status)
with open(os.environ["NGINX_ERRORS"]) as errors:
    failed = [line for line in errors if "[error]" in line or "[crit]" in line]
check(not failed, "nginx met no error with the origin: %s" % failed[:3])
print("cache check passed")
