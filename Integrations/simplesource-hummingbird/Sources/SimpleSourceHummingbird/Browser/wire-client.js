// SimpleSource's wire format, format 2, in the browser: a client that follows a service's view over a
// WebSocket (or, without WebSockets, by reads over HTTP, and edits by POST), applies each batch's stages to
// the sections it holds, and writes with `edit` messages: an edit is shown at once, kept on top of every
// state the server sends until the server answers (over HTTP: until what it reads shows the answer's
// version), and rolled back when refused. It reconnects with a resume from
// the version it holds, sending its pending edits again. Served by SimpleSourceHummingbird
// (`WireBrowserClient`); the wire format and writing from a client are articles of SimpleSource's DocC.
//
// What it shows is a page's: subclass it and override `show(sections)` and `showStatus(state, text)`.
// Sections are `{ id, header, items: [{ id, ... }] }`, as the service encodes them.
//
// Its replica: with `keepIn(storage, key)`, everything it holds (stream, version, state, query, pending
// edits, client id and edit count) is written to the browser's storage after each change and read back
// when the page starts, so a reload (online or not) shows at once what it held with its unsent edits on
// top, resumes rather than resets, and sends those edits again with their ids: a service that records
// its answers answers each id once.

const FORMAT = { format: "simplesource", formatVersion: 2 };

function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1];
}

export class WireClient {
  // `url`: the service's WebSocket; `user`: who reads and edits over HTTP speak for (their `X-User`
  // header); `reads` and `edits`: where views are read and edits posted when WebSockets are unavailable.
  constructor({ url, user = null, reads = "/read", edits = "/edit" }) {
    this.url = url;
    this.user = user;       // the user reads and edits over HTTP speak for (their `X-User` header)
    this.readsURL = reads;  // where views are read over HTTP when WebSockets are unavailable
    this.editsURL = edits;  // where edits are posted then
    this.posting = null;    // the id of the edit posted and not answered yet
    this.postRetries = 0;   // posts not answered in a row, and the timer that posts again
    this.postRetry = null;
    this.covered = -1;      // the newest source version a read's answer covered (its source-version header)
    this.reading = null;    // while following by reads: { token, cursor, abort }
    this.query = null;      // { name, parameters } asked for, or null for the whole scope
    this.shownQuery = null; // the query of the last reset: what the page shows
    this.held = [];         // [{ id, header, items: [{ id, ... }] }], the server's state held
    this.sections = [];     // what is shown: `held` with the pending edits on top
    this.pending = [];      // [{ id, operations, confirmedAt? }], not answered yet, oldest first; over HTTP,
                            // confirmed ones stay, with their version, until what is read shows it
    this.editsMade = 0;
    this.clientID = Math.random().toString(36).slice(2, 10);
    this.paused = false;    // while paused (a test's "offline"), the connection stays closed
    this.stream = null;     // the stream and version held, sent on reconnect to resume
    this.version = null;
    this.lastStart = null;  // "reset" or "resumed": how the last connection started
    this.counts = { batches: 0, resets: 0, resumes: 0, connections: 0 };
    this.lastError = null;
    this.socket = null;
    this.retry = 0;
    this.storage = null;    // where the replica is kept, and under which key (keepIn)
    this.storageKey = null;
    this.restored = false;  // whether this page started from a kept replica
    this.state = "offline"; // connecting, reconnecting, live, refused or offline
    this.transport = "websocket"; // or "reads"
  }

  // What a page shows of the sections: override it. Called after every change, with `this.sections`.
  show(sections) {}

  // What a page shows of the connection: override it. `text` is the state in words, or the refusal.
  showStatus(state, text) {}

  // Keeps the replica in `storage` (localStorage) under `key` from now on, starting from what is kept
  // there. What cannot be read (another format, damaged JSON) is dropped: the page starts from nothing.
  keepIn(storage, key) {
    this.storage = storage;
    this.storageKey = key;
    let kept = null;
    try {
      kept = JSON.parse(storage.getItem(key) ?? "null");
    } catch (error) {
      this.lastError = `the kept replica could not be read: ${error}`;
    }
    if (kept && kept.format === 1) {
      ({ clientID: this.clientID, editsMade: this.editsMade, stream: this.stream, version: this.version } = kept);
      this.held = kept.held;
      this.pending = kept.pending;
      this.query = this.shownQuery = kept.query;
      this.restored = true;
      this.render();
      this.setStatus("offline");
    } else {
      this.save();
    }
  }

  // Writes the replica: O(sections) per change, which a page's list affords (a large list would
  // journal its batches instead, as the Swift client's store does).
  save() {
    if (!this.storage) return;
    const kept = {
      format: 1, clientID: this.clientID, editsMade: this.editsMade, stream: this.stream,
      version: this.version, held: this.held, pending: this.pending, query: this.shownQuery,
    };
    try {
      this.storage.setItem(this.storageKey, JSON.stringify(kept));
    } catch (error) {
      // Full or refused: the page goes on in memory, and says so.
      this.lastError = `the replica could not be kept: ${error}`;
    }
  }

  connect() {
    this.setStatus("connecting");
    // Without WebSockets (a proxy that refuses the upgrade, a browser without them), the page follows its
    // view by reads over HTTP instead: the same messages, one answer after another.
    if (typeof WebSocket === "undefined") {
      this.followByReads();
      return;
    }
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => {
      this.counts.connections += 1;
      this.subscribe(this.stream !== null);
      // Unanswered edits may or may not have reached the server: it answers an id once.
      for (const edit of this.pending) this.sendEdit(edit);
    };
    socket.onmessage = (event) => {
      try {
        this.receive(JSON.parse(event.data));
      } catch (error) {
        // What is held can no longer be trusted: forget it, so the next connection resets.
        this.lastError = String(error);
        this.stream = null;
        this.version = null;
        this.save();
        socket.close();
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket || this.paused) return;
      this.setStatus("reconnecting");
      const delay = Math.min(2000, 50 * 2 ** this.retry);
      this.retry += 1;
      setTimeout(() => this.connect(), delay);
    };
  }

  // Follows the view by reads over HTTP (the wire format's reads over HTTP), until paused: the first names
  // the view by its query and is answered with a read token; every later one names it by that token, from
  // the version held, and waits at the newest (a long poll), so a cache in front can answer it for every
  // reader. Each answer's messages are received as a WebSocket's would be. Edits are posted
  // (`postEdits`), and those not answered are posted again after each answer.
  async followByReads() {
    this.transport = "reads";
    this.setStatus("connecting");
    this.counts.connections += 1;
    const reading = { token: null, cursor: null, abort: new AbortController() };
    this.reading = reading;
    while (this.reading === reading && !this.paused) {
      this.postEdits();
      const parameters = new URLSearchParams();
      if (reading.token !== null) parameters.set("token", reading.token);
      else if (this.query !== null) parameters.set("view", JSON.stringify(this.query));
      if (this.stream !== null) {
        parameters.set("offset", `${this.version}_${this.stream}`);
        parameters.set("live", "long-poll");
        if (reading.cursor !== null) parameters.set("cursor", reading.cursor);
      }
      let response, text;
      try {
        response = await fetch(`${this.readsURL}?${parameters}`, {
          headers: this.user ? { "X-User": this.user } : {}, signal: reading.abort.signal,
        });
        text = await response.text();
      } catch (error) {
        if (this.reading !== reading) return; // replaced (a new query) or paused
        this.setStatus("reconnecting");
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** this.retry++)));
        continue;
      }
      reading.token = response.headers.get("SimpleSource-Read-Token") ?? reading.token;
      reading.cursor = response.headers.get("Stream-Cursor") ?? reading.cursor;
      const covered = Number(response.headers.get("SimpleSource-Source-Version") ?? -1);
      if (response.status === 200) {
        try {
          for (const line of text.split("\n")) if (line) this.receive(JSON.parse(line));
        } catch (error) {
          // What is held can no longer be trusted: forget it, and read the view's state again.
          this.lastError = String(error);
          this.stream = null;
          this.version = null;
        }
        this.cover(covered);
      } else if (response.status === 204 || response.status === 304) {
        this.cover(covered);
      } else if (response.status === 403) {
        reading.token = null; // ended or refused: read by query again for a new one
      } else {
        this.lastError = text;
        this.setStatus("refused");
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** this.retry++)));
      }
    }
  }

  // Posts the oldest pending edit not answered yet and, once it is answered, the next: one at a time, in
  // the order they were made, as a WebSocket sends them (an edit may name what the one before it made).
  // A confirmed edit stays pending with its version until what is read shows it (`cover`); a refused one
  // is rolled back; one that could not be posted (offline, a busy server) is posted again after a pause
  // that doubles from 50 ms to 2 s, or after the next read's answer. A server answers an edit id once, so
  // posting again is safe.
  postEdits() {
    if (this.transport !== "reads" || this.paused || this.posting !== null) return;
    const edit = this.pending.find((each) => each.confirmedAt === undefined);
    if (!edit) return;
    this.posting = edit.id;
    const message = { ...FORMAT, type: "edit", id: edit.id, operations: edit.operations };
    if (edit.base !== null && edit.base !== undefined) message.base = edit.base;
    const headers = { "Content-Type": "application/json" };
    if (this.user) headers["X-User"] = this.user;
    fetch(this.editsURL, { method: "POST", headers, body: JSON.stringify(message) })
      .then(async (response) => {
        const answer = JSON.parse(await response.text());
        this.posting = null;
        if (answer.type === "confirmed") {
          edit.confirmedAt = answer.version;
          this.counts.confirmed = (this.counts.confirmed ?? 0) + 1;
          this.save();
          this.cover(-1);
        } else if (answer.type === "refused") {
          this.receive(answer);
        } else if (response.status === 400 || response.status === 413) {
          // The edit itself cannot be made: roll it back, as a refusal.
          this.receive({ type: "refused", edit: edit.id, code: answer.code, detail: answer.detail });
        } else {
          this.retryPosting(); // not answered (credentials, a limit, the server)
          return;
        }
        this.postRetries = 0;
        this.postEdits();
      })
      .catch(() => {
        this.posting = null;
        this.retryPosting();
      });
  }

  retryPosting() {
    clearTimeout(this.postRetry);
    this.postRetry = setTimeout(() => this.postEdits(), Math.min(2000, 50 * 2 ** this.postRetries++));
  }

  // What a read covered: the source's version its answer showed everything up to. An edit confirmed at a
  // version that what is held or read has reached is shown by what is held, or never will be in this view
  // (a version that changed nothing in it): it stops being shown on top.
  cover(version) {
    this.covered = Math.max(this.covered, version);
    const reached = Math.max(this.covered, this.version ?? -1);
    const before = this.pending.length;
    this.pending = this.pending.filter((edit) => edit.confirmedAt === undefined || edit.confirmedAt > reached);
    if (this.pending.length !== before) this.render();
  }

  // Closes the connection and keeps it closed until `resume()`: edits made meanwhile wait.
  pause() {
    this.paused = true;
    clearTimeout(this.postRetry);
    this.socket?.close();
    this.reading?.abort.abort();
    this.reading = null;
    this.setStatus("offline");
  }

  resume() {
    this.paused = false;
    this.connect();
  }

  // Makes `operations` one edit (the wire format's edits): shown at once, sent when connected, and kept on
  // top of what the server sends until it answers. Returns false, showing why, when it does not apply to
  // what is shown.
  edit(operations) {
    try {
      applyOperations(clone(this.sections), operations);
    } catch (error) {
      this.lastError = `invalidEdit: ${error.message}`;
      this.setStatus("refused");
      return false;
    }
    if (this.state === "refused") this.setStatus("live");
    this.editsMade += 1;
    // `base`: the version held when it was made, so that a server that keeps answers for a while can
    // tell an edit it never made from one whose answer it forgot.
    const edit = { id: `${this.clientID}-${this.editsMade}`, operations, base: this.version };
    this.pending.push(edit);
    if (this.transport === "reads") this.postEdits();
    else if (this.socket && this.socket.readyState === WebSocket.OPEN) this.sendEdit(edit);
    this.render();
    return true;
  }

  sendEdit(edit) {
    const message = { ...FORMAT, type: "edit", id: edit.id, operations: edit.operations };
    if (edit.base !== null && edit.base !== undefined) message.base = edit.base;
    this.socket.send(JSON.stringify(message));
  }

  // The held state with every pending edit applied on top; one that no longer applies (another writer
  // deleted what it names) is left out until the server answers it.
  rebased() {
    const shown = clone(this.held);
    for (const edit of this.pending) {
      const attempt = clone(shown);
      try {
        applyOperations(attempt, edit.operations);
        shown.splice(0, shown.length, ...attempt);
      } catch (error) {
        // Not shown; the server will refuse it.
      }
    }
    return shown;
  }

  // Sends a subscribe for the query asked for; resuming names the stream and version held (the server
  // answers with a reset when they are another query's).
  subscribe(resuming) {
    const request = { ...FORMAT, type: "subscribe" };
    if (resuming) {
      request.stream = this.stream;
      request.from = this.version;
    }
    if (this.query !== null) request.query = this.query;
    this.socket.send(JSON.stringify(request));
  }

  // Follows `query` from now on (null: the whole scope): one subscribe on the open connection. Batches
  // of the previous subscription that were already sent still apply in order; its reset replaces them.
  setQuery(query) {
    this.query = query;
    if (this.reading) {
      // Reads name their view by token: a new query is a new view, read from its state.
      this.reading.abort.abort();
      this.reading = null;
      this.stream = null;
      this.version = null;
      this.followByReads();
    } else if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.subscribe(false);
    }
  }

  receive(message) {
    if (message.format !== FORMAT.format || message.formatVersion !== FORMAT.formatVersion) {
      throw new Error(`unsupported format ${message.format} ${message.formatVersion}`);
    }
    switch (message.type) {
      case "reset":
        this.held = message.sections.map((section) => ({ ...section, items: section.items.slice() }));
        this.stream = message.stream;
        this.version = message.version;
        this.shownQuery = this.query;
        this.lastStart = "reset";
        this.counts.resets += 1;
        break;
      case "resumed":
        if (message.stream !== this.stream || message.version !== this.version) {
          throw new Error(`resumed ${message.stream} at ${message.version}, holding ${this.stream} at ${this.version}`);
        }
        this.lastStart = "resumed";
        this.counts.resumes += 1;
        break;
      case "batch":
        if (message.from !== this.version) throw new Error(`batch from ${message.from}, holding ${this.version}`);
        for (const stage of message.stages) applyStage(this.held, stage);
        this.version = message.to;
        this.counts.batches += 1;
        break;
      case "confirmed":
      case "refused": {
        const index = this.pending.findIndex((edit) => edit.id === message.edit);
        if (index < 0) return; // answered already, on an earlier connection
        this.pending.splice(index, 1);
        this.counts[message.type] = (this.counts[message.type] ?? 0) + 1;
        if (message.type === "refused") {
          // Rolled back: the page shows the held state without it, and why.
          this.lastError = `${message.code}: ${message.detail}`;
          this.render();
          this.setStatus("refused");
          return;
        }
        break;
      }
      case "error":
        // A refused subscribe changes nothing on the server: what is shown goes on.
        this.lastError = `${message.code}: ${message.detail}`;
        this.query = this.shownQuery;
        this.setStatus("refused");
        return;
      default:
        throw new Error(`unknown message type ${message.type}`);
    }
    this.retry = 0;
    this.render();
    // A refusal stays shown over later batches (an answer and a batch may come in either order), until
    // a new subscription starts or the user edits again.
    this.setStatus(this.state === "refused" && message.type === "batch" ? "refused" : "live");
  }

  // Shows `rebased()`, after keeping the replica.
  render() {
    this.save();
    this.sections = this.rebased();
    this.show(this.sections);
  }

  setStatus(state) {
    this.state = state;
    const pending = this.pending.length ? ` · ${this.pending.length} pending` : "";
    this.showStatus(
      state,
      state === "live" ? `live · version ${this.version}${pending}` : state === "refused" ? this.lastError : state);
  }
}

function clone(sections) {
  return sections.map((section) => ({ ...section, items: section.items.slice() }));
}

// A batch's stage applied to `held` (sections), by the wire format's five steps.
function applyStage(held, stage) {
  const sections = stage.sections || {};
  const items = stage.items || {};
  const kept = new Map();

  // 1. Item removals, in old coordinates, from the last position to the first.
  const itemRemovals = [
    ...(items.deletes || []).map((change) => ({ at: change.at, id: change.id })),
    ...(items.moves || []).map((change) => ({ at: change.from, id: change.id })),
  ].sort((a, b) => compare(b.at, a.at));
  for (const { at, id } of itemRemovals) {
    const section = held[at[0]];
    if (!section || section.items[at[1]]?.id !== id) throw new Error(`item ${id} is not at [${at}]`);
    const [item] = section.items.splice(at[1], 1);
    kept.set(id, item);
  }

  // 2. Section removals, from the highest index to the lowest.
  const sectionRemovals = [
    ...(sections.deletes || []).map((change) => ({ at: change.at, id: change.id })),
    ...(sections.moves || []).map((change) => ({ at: change.from, id: change.id })),
  ].sort((a, b) => b.at - a.at);
  const keptSections = new Map();
  for (const { at, id } of sectionRemovals) {
    if (held[at]?.id !== id) throw new Error(`section ${id} is not at ${at}`);
    const [section] = held.splice(at, 1);
    keptSections.set(id, section);
  }

  // 3. Section placements, in ascending new index.
  const sectionPlacements = [
    ...(sections.inserts || []).map((change) => ({
      at: change.at, section: { ...change.value, items: change.value.items.slice() },
    })),
    ...(sections.moves || []).map((change) => ({ at: change.to, section: keptSections.get(change.id) })),
  ].sort((a, b) => a.at - b.at);
  for (const { at, section } of sectionPlacements) {
    if (at > held.length) throw new Error(`section placed at ${at} of ${held.length}`);
    held.splice(at, 0, section);
  }

  // 4. Item placements, in ascending [section, item].
  const itemPlacements = [
    ...(items.inserts || []).map((change) => ({ at: change.at, item: change.value })),
    ...(items.moves || []).map((change) => ({ at: change.to, item: kept.get(change.id) })),
  ].sort((a, b) => compare(a.at, b.at));
  for (const { at, item } of itemPlacements) {
    const section = held[at[0]];
    if (!section || at[1] > section.items.length) throw new Error(`item placed at [${at}] is out of range`);
    section.items.splice(at[1], 0, item);
  }

  // 5. Refreshes, in place.
  for (const change of sections.updates || []) {
    const section = held[change.at];
    if (section?.id !== change.value.id) throw new Error(`section ${change.value.id} is not at ${change.at}`);
    // The section's own content (its header, its footer, whatever else it carries), with the items held.
    held[change.at] = { ...change.value, items: section.items };
  }
  for (const change of items.updates || []) {
    const section = held[change.at[0]];
    if (section?.items[change.at[1]]?.id !== change.value.id) {
      throw new Error(`item ${change.value.id} is not at [${change.at}]`);
    }
    section.items[change.at[1]] = change.value;
  }
}

// `target` with `patch` merged into it, as RFC 7396 says: objects member by member, `null` removes.
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else result[name] = mergePatch(result[name], value);
  }
  return result;
}

// An edit's operations (the wire format's edits) applied to `sections`, as the service's
// transaction applies them; throws what it refuses (an unknown id or anchor, an id that exists).
function applyOperations(sections, operations) {
  const find = (id) => {
    for (const [index, section] of sections.entries()) {
      const item = section.items.findIndex((other) => other.id === id);
      if (item >= 0) return [index, item];
    }
    throw new Error(`no item ${id}`);
  };
  const place = (operation) => {
    if (operation.section !== undefined) {
      const section = sections.findIndex((other) => other.id === operation.section);
      if (section < 0) throw new Error(`no section ${operation.section}`);
      return [section, sections[section].items.length];
    }
    const [section, item] = find(operation.before ?? operation.after);
    return [section, operation.before !== undefined ? item : item + 1];
  };
  for (const operation of operations) {
    switch (operation.op) {
      case "insert": {
        for (const item of operation.items) {
          if (sections.some((other) => other.items.some((each) => each.id === item.id))) {
            throw new Error(`item ${item.id} exists`);
          }
        }
        const [section, item] = place(operation);
        sections[section].items.splice(item, 0, ...operation.items);
        break;
      }
      case "replace": {
        const [section, item] = find(operation.item.id);
        sections[section].items[item] = operation.item;
        break;
      }
      case "patch": {
        // A JSON Merge Patch (RFC 7396) of the item as shown now: only the fields it names change.
        const [section, item] = find(operation.id);
        const patched = mergePatch(sections[section].items[item], operation.patch);
        if (patched?.id !== operation.id) throw new Error(`a patch does not change item ${operation.id}'s id`);
        sections[section].items[item] = patched;
        break;
      }
      case "named":
        // A named edit runs on the server's state, in Swift: the page shows it when its batch arrives.
        break;
      case "delete":
        for (const id of operation.ids) {
          const [section, item] = find(id);
          sections[section].items.splice(item, 1);
        }
        break;
      case "move": {
        const [section, index] = find(operation.id);
        const [item] = sections[section].items.splice(index, 1);
        if (operation.before === operation.id || operation.after === operation.id) {
          throw new Error(`item ${operation.id} cannot move next to itself`);
        }
        const [to, at] = place(operation);
        sections[to].items.splice(at, 0, item);
        break;
      }
      default:
        throw new Error(`unknown operation ${operation.op}`);
    }
  }
}
