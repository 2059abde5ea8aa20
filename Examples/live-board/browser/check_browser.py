#!/usr/bin/env python3
"""The live board in a real browser: headless Chromium driven by Selenium through chromium-driver.

Starts the server on a free port with a fresh SQLite file and opens two pages, one as alice and one as bob
(`?user=`), and bob again in a browser without WebSockets, whose page follows the board by reads over
HTTP (its search too) and posts its edits (one, added with the form, is shown at once and confirmed).
Makes writes over HTTP, shared and private, and checks that each page's DOM shows exactly the rows that
user may see, in the database's order, and never the other's private cards. Alice then adds a
private card through the page's form, and searches: her page shows only the matching cards she may see,
live while bob writes. A card made shared appears on bob's page. It closes alice's WebSocket, writes
while it is away, and checks that the page resumed (no reset) and shows the database again. Then the
pages write over their WebSockets: alice drags cards within and between columns (shown at once, before
the server answers), bob renames and deletes with the card's buttons, and each sees the other's edits;
alice, offline, drags a card while the server renames it, and renames one (a patch of its title) while
bob drags it: back online, both changes of each pair are on both pages; her ⤒ sends the named edit `toTop`,
which the server makes on its own state; and alice, offline, drags a card that bob deletes meanwhile:
back online, her move is refused, rolled back, and its reason shown. A card with a 300-letter word keeps the columns on screen, and the add form stays
reachable at the bottom of a long board. Saves screenshots to .build/board-alice.png, .build/board-bob.png
and .build/board-refused.png (not in git). Exits non-zero on any failure.

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
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, user=None):
    data = json.dumps(body).encode() if body is not None else None
    url = base + path + (f"?user={user}" if user else "")
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def dom_columns(driver):
    return driver.execute_script("""
        return [...document.querySelectorAll('#board > section.column')].map(column => ({
          id: column.dataset.id,
          items: [...column.querySelectorAll('li.card')].map(card => [card.dataset.id,
                                                                     card.querySelector('.title').textContent]),
        }));
    """)


def database_columns(base, user, search=None):
    """What `user` may see, as the database holds it; only the cards matching `search` when given."""
    board = call(base, "GET", "/api/board", user=user)
    return [{"id": c["id"], "items": [[i["id"], i["title"]] for i in c["items"]
                                      if search is None or search.lower() in i["title"].lower()]}
            for c in board["columns"]]


def answered(driver):
    """Waits until the page holds no pending edit: the server answered every one (so the database holds
    what it made before `wait_until_shows` reads it)."""
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.getElementById('board').dataset.pending") == "0")


def wait_until_shows(driver, base, user, search=None, state="live"):
    """Waits until the page is in `state` (live, or showing a refusal) and shows exactly what `user` may see
    (matching `search`)."""
    truth = database_columns(base, user, search)
    try:
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.getElementById('board').dataset.state") == state
            and dom_columns(d) == truth)
    except Exception:
        shown = driver.execute_script("return document.getElementById('board').dataset.state")
        raise AssertionError(f"{user}'s page ({shown}, not {state}) shows {dom_columns(driver)}, "
                             f"the database holds {truth}")
    return truth


def ids(columns):
    return {item[0] for column in columns for item in column["items"]}


def drag(driver, card, onto_card=None, onto_column=None):
    """Drags card `card` onto another card (before it) or onto a column's title (its end), as a user's
    drag and drop does: the page's dragstart, dragover and drop handlers with one DataTransfer. Returns the
    column the page shows the card in and its number of pending edits right after the drop, before any
    message from the server can be handled."""
    return driver.execute_script("""
        const [id, ontoCard, ontoColumn] = arguments;
        const source = document.querySelector(`li.card[data-id="${id}"]`);
        const target = ontoCard ? document.querySelector(`li.card[data-id="${ontoCard}"]`)
                                : document.querySelector(`section.column[data-id="${ontoColumn}"] h2`);
        const data = new DataTransfer();
        source.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: data}));
        target.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: data}));
        target.dispatchEvent(new DragEvent('drop', {bubbles: true, cancelable: true, dataTransfer: data}));
        source.dispatchEvent(new DragEvent('dragend', {bubbles: true, dataTransfer: data}));
        return [document.querySelector(`li.card[data-id="${id}"]`)?.closest('section').dataset.id,
                document.getElementById('board').dataset.pending];
    """, card, onto_card, onto_column)


def column_of(driver, card):
    return driver.execute_script(
        "return document.querySelector(`li.card[data-id='${arguments[0]}']`)?.closest('section').dataset.id",
        card)


def open_page(base, user, websockets=True):
    """A page as `user`; with `websockets` False, one whose browser has no WebSocket (removed before any of
    the page's scripts runs), which follows the board by reads over HTTP."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,700"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    if not websockets:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.WebSocket;"})
    driver.get(f"{base}/?user={user}")
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.getElementById('board').dataset.state") == "live")
    return driver


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(PACKAGE, ".build", "debug", "live-board")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = os.path.join(tempfile.mkdtemp(), "board.sqlite")
    server = subprocess.Popen([binary, "--port", str(port), "--db", database],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    drivers = []
    try:
        listening = server.stdout.readline()  # printed once the server listens
        if "listening" not in listening:
            raise AssertionError(f"the server did not start: {listening}")
        alice = open_page(base, "alice")
        drivers.append(alice)
        bob = open_page(base, "bob")
        drivers.append(bob)
        # Bob again, in a browser without WebSockets: the page follows the board by reads over HTTP.
        reader = open_page(base, "bob", websockets=False)
        drivers.append(reader)
        transport = reader.execute_script("return document.getElementById('board').dataset.transport")
        if transport != "reads":
            raise AssertionError(f"the page without WebSockets follows by {transport}")

        # Writes by HTTP, shared and private: each page shows exactly its user's rows, in order.
        for index, column in enumerate(["todo", "doing", "done", "todo", "todo", "doing"]):
            call(base, "POST", "/api/cards", {"id": f"c{index}", "title": f"Card {index}", "column": column})
        call(base, "POST", "/api/cards", {"id": "a-plan", "title": "Alice's plan", "column": "todo",
                                          "private": True}, user="alice")
        call(base, "POST", "/api/cards", {"id": "b-plan", "title": "Bob's plan", "column": "doing",
                                          "private": True, "before": "c1"}, user="bob")
        call(base, "POST", "/api/cards/c4/move", {"column": "todo", "before": "c0"})
        call(base, "PATCH", "/api/cards/c1", {"title": "Renamed"})
        call(base, "POST", "/api/cards/c2/move", {"column": "doing", "before": "c1"}, user="bob")
        call(base, "DELETE", "/api/cards/c3")
        shown = {"alice": ids(wait_until_shows(alice, base, "alice")), "bob": ids(wait_until_shows(bob, base, "bob"))}
        if "a-plan" not in shown["alice"] or "b-plan" in shown["alice"]:
            raise AssertionError(f"alice's page shows {shown['alice']}")
        if "b-plan" not in shown["bob"] or "a-plan" in shown["bob"]:
            raise AssertionError(f"bob's page shows {shown['bob']}")
        if ids(wait_until_shows(reader, base, "bob")) != shown["bob"]:
            raise AssertionError("bob's page reading over HTTP shows another board")
        # The page without WebSockets writes too: its edit is posted, shown at once, confirmed, and shown
        # until its reads show it; bob's other page follows.
        reader.find_element(By.CSS_SELECTOR, "#add input[name=title]").send_keys("Posted while reading")
        reader.find_element(By.CSS_SELECTOR, "#add button").click()
        if "Posted while reading" not in reader.find_element(By.ID, "board").text:
            raise AssertionError("the page without WebSockets does not show its edit at once")
        WebDriverWait(bob, 20).until(lambda d: "Posted while reading" in d.find_element(By.ID, "board").text)
        wait_until_shows(reader, base, "bob")
        posted = reader.execute_script(
            "return [window.boardClient.counts.confirmed, document.getElementById('board').dataset.pending]")
        if posted != [1, "0"] or "Posted while reading" not in reader.find_element(By.ID, "board").text:
            raise AssertionError(f"the page without WebSockets: its edit {posted}")

        # Alice adds a private card with the page's form: hers alone, marked private.
        alice.find_element(By.CSS_SELECTOR, "#add input[name=title]").send_keys("From the form")
        alice.find_element(By.CSS_SELECTOR, "#add input[name=private]").click()
        alice.find_element(By.CSS_SELECTOR, "#add button").click()
        WebDriverWait(alice, 20).until(lambda d: "From the form" in d.find_element(By.ID, "board").text)
        wait_until_shows(alice, base, "alice")
        wait_until_shows(bob, base, "bob")
        if "From the form" in bob.find_element(By.ID, "board").text:
            raise AssertionError("bob's page shows alice's private card")
        marked = alice.execute_script(
            "return [...document.querySelectorAll('li.card.private .title')].map(title => title.textContent).sort()")
        if marked != ["Alice's plan", "From the form"]:
            raise AssertionError(f"alice's private cards are marked {marked}")

        # Alice searches: a live query; bob's writes that match show up, his private ones never.
        alice.find_element(By.ID, "search").send_keys("plan")
        wait_until_shows(alice, base, "alice", search="plan")
        call(base, "POST", "/api/cards", {"id": "s-plan", "title": "Shared plan", "column": "done"}, user="bob")
        call(base, "POST", "/api/cards", {"id": "b-plan2", "title": "Bob's other plan", "column": "done",
                                          "private": True}, user="bob")
        call(base, "PATCH", "/api/cards/c0", {"title": "Card 0, planned"}, user="bob")
        searched = ids(wait_until_shows(alice, base, "alice", search="plan"))
        if searched != {"a-plan", "s-plan", "c0"}:
            raise AssertionError(f"alice's search shows {searched}")
        # The same live query read over HTTP: bob's reading page searches, and follows bob's next write.
        reader.find_element(By.ID, "search").send_keys("plan")
        wait_until_shows(reader, base, "bob", search="plan")
        call(base, "POST", "/api/cards", {"id": "b-plan3", "title": "Bob's third plan", "column": "todo",
                                          "private": True}, user="bob")
        if "b-plan3" not in ids(wait_until_shows(reader, base, "bob", search="plan")):
            raise AssertionError("bob's reading page missed his new plan")
        reader.find_element(By.ID, "search").clear()
        reader.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")
        wait_until_shows(reader, base, "bob")
        alice.find_element(By.ID, "search").clear()
        alice.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")
        wait_until_shows(alice, base, "alice")

        # Alice shares her plan: an insert on bob's page. Bob takes a shared card private: a delete on hers.
        call(base, "PATCH", "/api/cards/a-plan", {"private": False}, user="alice")
        call(base, "PATCH", "/api/cards/c5", {"private": True}, user="bob")
        if "a-plan" not in ids(wait_until_shows(bob, base, "bob")):
            raise AssertionError("alice's shared plan did not reach bob's page")
        if "c5" in ids(wait_until_shows(alice, base, "alice")):
            raise AssertionError("bob's private card is still on alice's page")

        # Drop alice's WebSocket and write while the page is away: it resumes from its version.
        resets = alice.execute_script("return window.boardClient.counts.resets")
        alice.execute_script("window.boardClient.socket.close()")
        call(base, "POST", "/api/cards", {"id": "late", "title": "Written while away", "column": "done"})
        call(base, "POST", "/api/cards/c4/move", {"column": "done"}, user="alice")
        wait_until_shows(alice, base, "alice")
        wait_until_shows(bob, base, "bob")
        counts = alice.execute_script("return window.boardClient.counts")
        last_start = alice.execute_script("return window.boardClient.lastStart")
        error = alice.execute_script("return window.boardClient.lastError")
        if last_start != "resumed" or counts["resets"] != resets or counts["resumes"] != 1 or error:
            raise AssertionError(f"expected a resume after the drop, got {counts}, {last_start}, {error}")

        # The pages write over their WebSockets. Alice drags c0 to the end of "done" and c4 before c1:
        # shown at once, before any answer; bob's page follows.
        early = [drag(alice, "c0", onto_column="done"), drag(alice, "c4", onto_card="c1")]
        if early[0] != ["done", "1"] or early[1][0] != "doing" or early[1][1] not in ("1", "2"):
            raise AssertionError(f"the drags were not shown at once, pending: {early}")
        answered(alice)
        wait_until_shows(alice, base, "alice")
        wait_until_shows(bob, base, "bob")
        if column_of(bob, "c0") != "done" or column_of(bob, "c4") != "doing":
            raise AssertionError("alice's drags did not reach bob's page")

        # Bob renames c1 and deletes c2 with the card's buttons; alice's page follows.
        bob.find_element(By.CSS_SELECTOR, "li.card[data-id=c1] button.rename").click()
        field = bob.find_element(By.CSS_SELECTOR, "li.card[data-id=c1] input")
        field.clear()
        field.send_keys("Renamed by bob\n")
        bob.find_element(By.CSS_SELECTOR, "li.card[data-id=c2] button.delete").click()
        answered(bob)
        truth = wait_until_shows(alice, base, "alice")
        wait_until_shows(bob, base, "bob")
        if [i for c in truth for i in c["items"] if i[0] == "c1"] != [["c1", "Renamed by bob"]] or "c2" in ids(truth):
            raise AssertionError(f"bob's rename and delete: {truth}")

        # Offline, alice drags c0 to "doing" while the server renames it: back online, both changes are on
        # both pages (the drag sends a move, which names no title).
        alice.execute_script("window.boardClient.pause()")
        if drag(alice, "c0", onto_column="doing")[0] != "doing":
            raise AssertionError("the offline drag of c0 was not shown")
        call(base, "PATCH", "/api/cards/c0", {"title": "Renamed by the server"})
        alice.execute_script("window.boardClient.resume()")
        answered(alice)
        for driver, user in [(alice, "alice"), (bob, "bob")]:
            truth = wait_until_shows(driver, base, user)
            shown = [[column["id"], item] for column in truth for item in column["items"] if item[0] == "c0"]
            if shown != [["doing", ["c0", "Renamed by the server"]]] or column_of(driver, "c0") != "doing":
                raise AssertionError(f"{user}: the drag and the server's rename of c0: {shown}")

        # Offline, alice renames c0 (a patch of its title) while bob drags it back to "todo": both kept.
        alice.execute_script("window.boardClient.pause()")
        alice.find_element(By.CSS_SELECTOR, "li.card[data-id=c0] button.rename").click()
        field = alice.find_element(By.CSS_SELECTOR, "li.card[data-id=c0] input")
        field.clear()
        field.send_keys("Renamed by alice\n")
        sent = alice.execute_script("return window.boardClient.pending.at(-1).operations")
        if sent != [{"op": "patch", "id": "c0", "patch": {"title": "Renamed by alice"}}]:
            raise AssertionError(f"the rename is not a patch of the title: {sent}")
        drag(bob, "c0", onto_column="todo")
        answered(bob)
        wait_until_shows(bob, base, "bob")
        alice.execute_script("window.boardClient.resume()")
        answered(alice)
        for driver, user in [(alice, "alice"), (bob, "bob")]:
            truth = wait_until_shows(driver, base, user)
            shown = [[column["id"], item] for column in truth for item in column["items"] if item[0] == "c0"]
            if shown != [["todo", ["c0", "Renamed by alice"]]]:
                raise AssertionError(f"{user}: alice's rename and bob's drag of c0: {shown}")

        # A named edit: alice's ⤒ on c0 sends `toTop` by name; the server finds the column's first card.
        alice.find_element(By.CSS_SELECTOR, "li.card[data-id=c0] button.top").click()
        answered(alice)
        for driver, user in [(alice, "alice"), (bob, "bob")]:
            truth = wait_until_shows(driver, base, user)
            first = driver.execute_script(
                "return document.querySelector('section.column[data-id=todo] li.card:not(.private)').dataset.id")
            if first != "c0" or next(c for c in truth if c["id"] == "todo")["items"][0][0] not in ("c0", "a-plan"):
                raise AssertionError(f"{user}: toTop did not put c0 first: {first}, {truth}")

        # Offline, alice drags `late` into "todo"; bob deletes it meanwhile. Back online her move is sent,
        # refused (no such card), and rolled back: her page shows the database and the reason.
        alice.execute_script("window.boardClient.pause()")
        if drag(alice, "late", onto_column="todo") != ["todo", "1"]:
            raise AssertionError("the offline drag was not shown")
        bob.find_element(By.CSS_SELECTOR, "li.card[data-id=late] button.delete").click()
        wait_until_shows(bob, base, "bob")
        alice.execute_script("window.boardClient.resume()")
        wait_until_shows(alice, base, "alice", state="refused")
        refusal = alice.execute_script(
            "return [window.boardClient.counts.refused, window.boardClient.lastError, "
            "document.getElementById('board').dataset.pending]")
        if refusal[0] != 1 or "unknownCard" not in (refusal[1] or "") or refusal[2] != "0":
            raise AssertionError(f"the refused move: {refusal}")
        os.makedirs(os.path.join(PACKAGE, ".build"), exist_ok=True)
        alice.save_screenshot(os.path.join(PACKAGE, ".build", "board-refused.png"))

        # A 300-letter word keeps every column on screen; on a long board the add form stays reachable.
        alice.find_element(By.CSS_SELECTOR, "#add input[name=title]").send_keys("W" * 300)
        alice.find_element(By.CSS_SELECTOR, "#add button").click()
        wait_until_shows(alice, base, "alice")
        for index in range(40):
            call(base, "POST", "/api/cards", {"id": f"long{index}", "title": f"Long {index}", "column": "todo"})
        wait_until_shows(alice, base, "alice")
        layout = alice.execute_script("""
            window.scrollTo(0, document.body.scrollHeight);
            const form = document.getElementById('add').getBoundingClientRect();
            return [document.documentElement.scrollWidth <= document.documentElement.clientWidth,
                    form.top >= 0 && form.bottom <= window.innerHeight, window.scrollY > 0];
        """)
        if layout != [True, True, True]:
            raise AssertionError(f"layout (no sideways scroll, form on screen, scrolled): {layout}")
        edits = alice.execute_script("return window.boardClient.counts")

        for user, driver in [("alice", alice), ("bob", bob)]:
            driver.save_screenshot(os.path.join(PACKAGE, ".build", f"board-{user}.png"))
        print(f"browser: two users' pages each showed exactly their rows (bob's also by reads over HTTP, "
              f"without WebSockets, its search too, and its edit posted); alice's page followed "
              f"{edits['batches']} batches over {edits['connections']} connections and {edits['resets']} "
              f"resets (each search is one), resumed after the drop; the pages' edits were shown at once and "
              f"reconciled ({edits.get('confirmed', 0)} confirmed, {edits.get('refused', 0)} refused and rolled "
              f"back); screenshots in .build/board-*.png")
    finally:
        for driver in drivers:
            driver.quit()
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
