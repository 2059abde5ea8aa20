#!/usr/bin/env python3
"""The live board's page offline, in a real browser against the cluster (nginx in front of three instances).

Headless Chromium, driven by Selenium, opens the page as olive through nginx and waits until its service
worker keeps the page. Then the browser goes offline (Chrome's network emulation: no request and no
WebSocket gets out) and the page's connection is closed; olive makes three edits (an insert, a rename, a
move), which the page shows at once; the page is reloaded while still offline: it loads from the service
worker and shows the three edits from its replica in localStorage. One instance is killed meanwhile
(`cluster.sh kill 1`). Back online, the page reconnects through nginx to another instance, resumes (no
reset), and sends its three edits again with their ids: each is confirmed, made exactly once (the board
moved by exactly three versions), and the page shows what the database holds. Exits non-zero on any
failure; starts the killed instance again before it exits.

    python3 browser/check_offline.py --web 127.0.0.1:8090 --script ./cluster.sh
"""

import argparse
import json
import os
import subprocess
import sys
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

# The board's own browser check, beside the board's package, reads the page's columns.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../live-board/browser"))
from check_browser import dom_columns  # noqa: E402

USER = "olive"


def call(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}?user={USER}", data=data, method=method,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def database_columns(base):
    board = call(base, "GET", "/api/board")
    return board["version"], [{"id": c["id"], "items": [[i["id"], i["title"]] for i in c["items"]]}
                              for c in board["columns"]]


def page(driver, expression):
    return driver.execute_script(f"return {expression}")


def wait(driver, condition, what, seconds=30):
    try:
        WebDriverWait(driver, seconds).until(condition)
    except Exception:
        raise AssertionError(f"{what}: the page is {page(driver, 'document.getElementById(`board`).dataset.state')}, "
                             f"shows {dom_columns(driver)}, pending {page(driver, 'boardClient.pending.length')}, "
                             f"last error {page(driver, 'boardClient.lastError')}")


def offline(driver, on):
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": on, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--web", default="127.0.0.1:8090")
    parser.add_argument("--script", required=True)
    arguments = parser.parse_args()
    base = f"http://{arguments.web}"

    call(base, "POST", "/api/cards", {"id": "olive-base", "title": "Olive's card", "column": "todo"})
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,700"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    killed = False
    try:
        driver.get(f"{base}/?user={USER}")
        wait(driver, lambda d: page(d, "document.getElementById('board').dataset.state") == "live"
             and dom_columns(d) == database_columns(base)[1], "the page online")
        wait(driver, lambda d: page(d, "navigator.serviceWorker.controller !== null"),
             "the service worker keeps the page")

        # Offline: nothing gets out; the page's connection is closed and cannot open again.
        offline(driver, True)
        connections = page(driver, "boardClient.counts.connections")
        driver.execute_script("boardClient.socket.close()")
        wait(driver, lambda d: page(d, "document.getElementById('board').dataset.state") != "live",
             "the page notices it is offline")
        made = driver.execute_script("""
            const client = window.boardClient;
            return [
              client.edit([{ op: "insert", items: [{ id: "olive-new", title: "Made offline" }], section: "doing" }]),
              client.edit([{ op: "replace", item: { id: "olive-base", title: "Renamed offline" } }]),
              client.edit([{ op: "move", id: "olive-base", section: "done" }]),
            ];
        """)
        assert made == [True, True, True], f"the offline edits were refused on the page: {made}"
        shown = dom_columns(driver)

        # Reloaded while offline: the page comes from the service worker, its state from localStorage.
        driver.refresh()
        wait(driver, lambda d: page(d, "window.boardClient?.restored === true"), "the page restored its replica")
        assert dom_columns(driver) == shown, f"after the reload the page shows {dom_columns(driver)}, not {shown}"
        assert page(driver, "boardClient.pending.length") == 3, "the three edits are pending after the reload"
        assert page(driver, "boardClient.counts.connections") == 0, "the page connected while offline"
        version_before, _ = database_columns(base)

        subprocess.run(["bash", arguments.script, "kill", "1"], check=True)
        killed = True
        offline(driver, False)
        wait(driver, lambda d: page(d, "boardClient.pending.length") == 0
             and page(d, "document.getElementById('board').dataset.state") == "live", "the edits answered")
        version_after, truth = database_columns(base)
        wait(driver, lambda d: dom_columns(d) == database_columns(base)[1], "the page equals the database")
        assert page(driver, "boardClient.lastStart") == "resumed", "the page reset instead of resuming"
        assert page(driver, "boardClient.counts.confirmed") == 3, \
            f"confirmed: {page(driver, 'boardClient.counts.confirmed')}, refused: {page(driver, 'boardClient.counts.refused')}"
        assert version_after == version_before + 3, f"three edits made {version_after - version_before} versions"
        cards = {card[0]: (column["id"], card[1]) for column in truth for card in column["items"]}
        assert cards.get("olive-new") == ("doing", "Made offline"), f"olive-new: {cards.get('olive-new')}"
        assert cards.get("olive-base") == ("done", "Renamed offline"), f"olive-base: {cards.get('olive-base')}"
        print(f"check_offline: 3 edits made offline, shown after a reload offline (connections before: "
              f"{connections}), sent after instance 1 was killed: each confirmed and made once "
              f"(versions {version_before} to {version_after}); the page resumed and equals the database")
    finally:
        driver.quit()
        if killed:
            subprocess.run(["bash", arguments.script, "start-instance", "1"], check=True)


if __name__ == "__main__":
    main()
