#!/usr/bin/env python3
"""The live board in a real browser: headless Chromium driven by Selenium through chromium-driver.

Starts the server on a free port with a fresh SQLite file, opens the page, makes writes over HTTP, and
checks that the DOM shows exactly the database's rows in order; then closes the page's WebSocket, writes
while it is away, and checks that it resumed from its version (no reset) and shows the database again.
Saves a screenshot to .build/board.png (not in git). Exits non-zero on any failure.

    python3 browser/check_browser.py [path/to/live-board]
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def dom_columns(driver):
    return driver.execute_script("""
        return [...document.querySelectorAll('#board > section.column')].map(column => ({
          id: column.dataset.id,
          items: [...column.querySelectorAll('li.card')].map(card => [card.dataset.id, card.textContent]),
        }));
    """)


def database_columns(base):
    board = call(base, "GET", "/api/board")
    columns = [{"id": c["id"], "items": [[i["id"], i["title"]] for i in c["items"]]} for c in board["columns"]]
    return board["version"], columns


def wait_until_shows(driver, base, version):
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script(
            "const b = document.getElementById('board'); return b.dataset.state === 'live' && b.dataset.version"
        ) == str(version))
    shown = dom_columns(driver)
    _, truth = database_columns(base)
    if shown != truth:
        raise AssertionError(f"the page shows {shown}, the database holds {truth}")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(PACKAGE, ".build", "debug", "live-board")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = os.path.join(tempfile.mkdtemp(), "board.sqlite")
    server = subprocess.Popen([binary, "--port", str(port), "--db", database],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        listening = server.stdout.readline()  # printed once the server listens
        if "listening" not in listening:
            raise AssertionError(f"the server did not start: {listening}")
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,700"]:
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(base + "/")
            WebDriverWait(driver, 20).until(
                lambda d: d.execute_script("return document.getElementById('board').dataset.state") == "live")

            # Writes by HTTP: the page shows exactly the database's rows, in order.
            for index, column in enumerate(["todo", "doing", "done", "todo", "todo", "doing"]):
                version = call(base, "POST", "/api/cards",
                               {"id": f"c{index}", "title": f"Card {index}", "column": column})["version"]
            call(base, "POST", "/api/cards/c4/move", {"column": "todo", "before": "c0"})
            call(base, "PATCH", "/api/cards/c1", {"title": "Renamed"})
            call(base, "POST", "/api/cards/c2/move", {"column": "doing", "before": "c1"})
            version = call(base, "DELETE", "/api/cards/c3")["version"]
            wait_until_shows(driver, base, version)

            # Drop the WebSocket and write while the page is away: it resumes from its version.
            driver.execute_script("window.boardClient.socket.close()")
            call(base, "POST", "/api/cards", {"id": "late", "title": "Written while away", "column": "done"})
            version = call(base, "POST", "/api/cards/c5/move", {"column": "todo"})["version"]
            wait_until_shows(driver, base, version)
            counts = driver.execute_script("return window.boardClient.counts")
            last_start = driver.execute_script("return window.boardClient.lastStart")
            error = driver.execute_script("return window.boardClient.lastError")
            if last_start != "resumed" or counts["resets"] != 1 or counts["resumes"] != 1 or error:
                raise AssertionError(f"expected one reset then one resume, got {counts}, {last_start}, {error}")

            os.makedirs(os.path.join(PACKAGE, ".build"), exist_ok=True)
            screenshot = os.path.join(PACKAGE, ".build", "board.png")
            driver.save_screenshot(screenshot)
            print(f"browser: the page followed {counts['batches']} batches over {counts['connections']} "
                  f"connections, resumed after the drop, and shows the database; screenshot {screenshot}")
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
