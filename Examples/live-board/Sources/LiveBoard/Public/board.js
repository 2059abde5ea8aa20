// A client of the SimpleSource wire format, format 2 (WireFormat.md): it subscribes to the whole board or
// to a query (a search), applies each batch's stages to the state it holds, and writes with `edit`
// messages: an edit is shown at once, kept on top of every state the server sends until the server
// answers, and rolled back when refused (WritingFromAClient.md). The DOM shows the held state with the
// pending edits on top, rendered by card id. It shows the connection's state, and reconnects with a
// resume from the version it holds, sending its pending edits again.
//
// Its replica: with `keepIn(storage, key)`, everything it holds (stream, version, state, query, pending
// edits, client id and edit count) is written to the browser's storage after each change and read back
// when the page starts, so a reload (online or not) shows at once what it held with its unsent edits on
// top, resumes rather than resets, and sends those edits again with their ids: the server answers each id
// once, from its database, on any instance.

const FORMAT = { format: "simplesource", formatVersion: 2 };

function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1];
}

export class BoardClient {
  constructor({ root, status, url, user = null, reads = "/read" }) {
    this.root = root;
    this.statusElement = status;
    this.url = url;
    this.user = user;       // the user reads speak for (their `X-User` header)
    this.readsURL = reads;  // where the board's views are read over HTTP when WebSockets are unavailable
    this.reading = null;    // while following by reads: { token, cursor, abort }
    this.query = null;      // { name, parameters } asked for, or null for the whole board
    this.shownQuery = null; // the query of the last reset: what the page shows
    this.held = [];         // [{ id, header, items: [{ id, title, owner? }] }], the server's state held
    this.columns = [];      // what the DOM shows: `held` with the pending edits on top
    this.pending = [];      // [{ id, operations }], sent and not answered yet, oldest first
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
  }

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

  // Writes the replica: O(board) per change, which a board of cards affords (a large list would journal
  // its batches instead, as the Swift client's store does).
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

  // Follows the view by reads over HTTP (WireFormat.md, Reads over HTTP), until paused: the first names
  // the view by its query and is answered with a read token; every later one names it by that token, from
  // the version held, and waits at the newest (a long poll), so a cache in front can answer it for every
  // reader. Each answer's messages are received as a WebSocket's would be. Edits wait, pending, for a
  // WebSocket: reads only read.
  async followByReads() {
    this.root.dataset.transport = "reads";
    this.counts.connections += 1;
    const reading = { token: null, cursor: null, abort: new AbortController() };
    this.reading = reading;
    while (this.reading === reading && !this.paused) {
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
      if (response.status === 200) {
        try {
          for (const line of text.split("\n")) if (line) this.receive(JSON.parse(line));
        } catch (error) {
          // What is held can no longer be trusted: forget it, and read the view's state again.
          this.lastError = String(error);
          this.stream = null;
          this.version = null;
        }
      } else if (response.status === 403) {
        reading.token = null; // ended or refused: read by query again for a new one
      } else if (response.status !== 204 && response.status !== 304) {
        this.lastError = text;
        this.setStatus("refused");
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** this.retry++)));
      }
    }
  }

  // Closes the connection and keeps it closed until `resume()`: edits made meanwhile wait.
  pause() {
    this.paused = true;
    this.socket?.close();
    this.reading?.abort.abort();
    this.reading = null;
    this.setStatus("offline");
  }

  resume() {
    this.paused = false;
    this.connect();
  }

  // Makes `operations` one edit (WireFormat.md, Edits): shown at once, sent when connected, and kept on
  // top of what the server sends until it answers. Returns false, showing why, when it does not apply to
  // what is shown.
  edit(operations) {
    try {
      applyOperations(clone(this.columns), operations);
    } catch (error) {
      this.lastError = `invalidEdit: ${error.message}`;
      this.setStatus("refused");
      return false;
    }
    if (this.root.dataset.state === "refused") this.setStatus("live");
    this.editsMade += 1;
    // `base`: the version held when it was made, so that a server that keeps answers for a while can
    // tell an edit it never made from one whose answer it forgot.
    const edit = { id: `${this.clientID}-${this.editsMade}`, operations, base: this.version };
    this.pending.push(edit);
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.sendEdit(edit);
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

  // Follows `query` from now on (null: the whole board): one subscribe on the open connection. Batches
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
    this.setStatus(this.root.dataset.state === "refused" && message.type === "batch" ? "refused" : "live");
  }

  // Shows `rebased()`, reusing each column's and card's element by id: a card that moved keeps its
  // element (and focus), one whose content changed gets a new one.
  render() {
    this.save();
    this.columns = this.rebased();
    this.root.dataset.pending = String(this.pending.length);
    const sections = new Map([...this.root.children].map((element) => [element.dataset.id, element]));
    const cards = new Map([...this.root.querySelectorAll("li.card")].map((element) => [element.dataset.id, element]));
    this.root.replaceChildren(...this.columns.map((column) => {
      const element = sections.get(column.id) ?? this.sectionElement(column);
      element.querySelector("h2").textContent = column.header ?? column.id;
      const list = element.querySelector("ol");
      list.replaceChildren(...column.items.map((card) => {
        const existing = cards.get(card.id);
        return existing && existing.dataset.content === JSON.stringify(card) ? existing : this.cardElement(card);
      }));
      return element;
    }));
  }

  cardElement(card) {
    const element = document.createElement("li");
    element.className = card.owner ? "card private" : "card";
    element.dataset.id = card.id;
    element.dataset.content = JSON.stringify(card);
    element.draggable = true;
    if (card.owner) element.title = "private: only you see it";
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = card.title;
    const rename = document.createElement("button");
    rename.className = "rename";
    rename.title = "Rename";
    rename.textContent = "✎";
    const top = document.createElement("button");
    top.className = "top";
    top.title = "To the top of its column";
    top.textContent = "⤒";
    const remove = document.createElement("button");
    remove.className = "delete";
    remove.title = "Delete";
    remove.textContent = "×";
    element.append(title, rename, top, remove);
    return element;
  }

  sectionElement(section) {
    const element = document.createElement("section");
    element.className = "column";
    element.dataset.id = section.id;
    const title = document.createElement("h2");
    const list = document.createElement("ol");
    list.className = "cards";
    element.append(title, list);
    return element;
  }

  setStatus(state) {
    this.statusElement.className = state;
    const pending = this.pending.length ? ` · ${this.pending.length} pending` : "";
    this.statusElement.textContent =
      state === "live" ? `live · version ${this.version}${pending}` : state === "refused" ? this.lastError : state;
    this.root.dataset.version = this.version ?? "";
    this.root.dataset.state = state;
  }
}

function clone(columns) {
  return columns.map((column) => ({ ...column, items: column.items.slice() }));
}

// The five steps of WireFormat.md, on a model of columns.
function applyStage(columns, stage) {
  const sections = stage.sections || {};
  const items = stage.items || {};
  const kept = new Map();

  // 1. Item removals, in old coordinates, from the last position to the first.
  const itemRemovals = [
    ...(items.deletes || []).map((change) => ({ at: change.at, id: change.id })),
    ...(items.moves || []).map((change) => ({ at: change.from, id: change.id })),
  ].sort((a, b) => compare(b.at, a.at));
  for (const { at, id } of itemRemovals) {
    const column = columns[at[0]];
    if (!column || column.items[at[1]]?.id !== id) throw new Error(`item ${id} is not at [${at}]`);
    const [item] = column.items.splice(at[1], 1);
    kept.set(id, item);
  }

  // 2. Section removals, from the highest index to the lowest.
  const sectionRemovals = [
    ...(sections.deletes || []).map((change) => ({ at: change.at, id: change.id })),
    ...(sections.moves || []).map((change) => ({ at: change.from, id: change.id })),
  ].sort((a, b) => b.at - a.at);
  const keptSections = new Map();
  for (const { at, id } of sectionRemovals) {
    if (columns[at]?.id !== id) throw new Error(`section ${id} is not at ${at}`);
    const [section] = columns.splice(at, 1);
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
    if (at > columns.length) throw new Error(`section placed at ${at} of ${columns.length}`);
    columns.splice(at, 0, section);
  }

  // 4. Item placements, in ascending [section, item].
  const itemPlacements = [
    ...(items.inserts || []).map((change) => ({ at: change.at, item: change.value })),
    ...(items.moves || []).map((change) => ({ at: change.to, item: kept.get(change.id) })),
  ].sort((a, b) => compare(a.at, b.at));
  for (const { at, item } of itemPlacements) {
    const column = columns[at[0]];
    if (!column || at[1] > column.items.length) throw new Error(`item placed at [${at}] is out of range`);
    column.items.splice(at[1], 0, item);
  }

  // 5. Refreshes, in place.
  for (const change of sections.updates || []) {
    const column = columns[change.at];
    if (column?.id !== change.value.id) throw new Error(`section ${change.value.id} is not at ${change.at}`);
    column.header = change.value.header;
  }
  for (const change of items.updates || []) {
    const column = columns[change.at[0]];
    if (column?.items[change.at[1]]?.id !== change.value.id) {
      throw new Error(`item ${change.value.id} is not at [${change.at}]`);
    }
    column.items[change.at[1]] = change.value;
  }
}

// An edit's operations (WireFormat.md, Edits) applied to a model of columns, as the server's transaction
// applies them; throws what it refuses (an unknown id or anchor, an id that exists).
/** `target` with `patch` merged into it, as RFC 7396 says: objects member by member, `null` removes. */
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else result[name] = mergePatch(result[name], value);
  }
  return result;
}

function applyOperations(columns, operations) {
  const find = (id) => {
    for (const [section, column] of columns.entries()) {
      const item = column.items.findIndex((card) => card.id === id);
      if (item >= 0) return [section, item];
    }
    throw new Error(`no card ${id}`);
  };
  const place = (operation) => {
    if (operation.section !== undefined) {
      const section = columns.findIndex((column) => column.id === operation.section);
      if (section < 0) throw new Error(`no column ${operation.section}`);
      return [section, columns[section].items.length];
    }
    const [section, item] = find(operation.before ?? operation.after);
    return [section, operation.before !== undefined ? item : item + 1];
  };
  for (const operation of operations) {
    switch (operation.op) {
      case "insert": {
        for (const card of operation.items) {
          if (columns.some((column) => column.items.some((other) => other.id === card.id))) {
            throw new Error(`card ${card.id} exists`);
          }
        }
        const [section, item] = place(operation);
        columns[section].items.splice(item, 0, ...operation.items);
        break;
      }
      case "replace": {
        const [section, item] = find(operation.item.id);
        columns[section].items[item] = operation.item;
        break;
      }
      case "patch": {
        // A JSON Merge Patch (RFC 7396) of the card as shown now: only the fields it names change.
        const [section, item] = find(operation.id);
        const patched = mergePatch(columns[section].items[item], operation.patch);
        if (patched?.id !== operation.id) throw new Error(`a patch does not change card ${operation.id}'s id`);
        columns[section].items[item] = patched;
        break;
      }
      case "named":
        // A named edit runs on the server's state, in Swift: the page shows it when its batch arrives.
        break;
      case "delete":
        for (const id of operation.ids) {
          const [section, item] = find(id);
          columns[section].items.splice(item, 1);
        }
        break;
      case "move": {
        const [section, item] = find(operation.id);
        const [card] = columns[section].items.splice(item, 1);
        if (operation.before === operation.id || operation.after === operation.id) {
          throw new Error(`card ${operation.id} cannot move next to itself`);
        }
        const [to, index] = place(operation);
        columns[to].items.splice(index, 0, card);
        break;
      }
      default:
        throw new Error(`unknown operation ${operation.op}`);
    }
  }
}
