// A client of the SimpleSource wire format, format 2 (WireFormat.md): it subscribes to the whole board or
// to a query (a search), renders the board by ids, applies each batch's stages to its model and to the
// DOM in lockstep, shows the connection's state, and reconnects with a resume from the version it holds.

const FORMAT = { format: "simplesource", formatVersion: 2 };

function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1];
}

export class BoardClient {
  constructor({ root, status, url }) {
    this.root = root;
    this.statusElement = status;
    this.url = url;
    this.query = null;      // { name, parameters } asked for, or null for the whole board
    this.shownQuery = null; // the query of the last reset: what the page shows
    this.columns = [];      // [{ id, header, items: [{ id, title }] }], what the DOM shows
    this.stream = null;     // the stream and version held, sent on reconnect to resume
    this.version = null;
    this.lastStart = null;  // "reset" or "resumed": how the last connection started
    this.counts = { batches: 0, resets: 0, resumes: 0, connections: 0 };
    this.lastError = null;
    this.socket = null;
    this.retry = 0;
  }

  connect() {
    this.setStatus("connecting");
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => {
      this.counts.connections += 1;
      this.subscribe(this.stream !== null);
    };
    socket.onmessage = (event) => {
      try {
        this.receive(JSON.parse(event.data));
      } catch (error) {
        // What is held can no longer be trusted: forget it, so the next connection resets.
        this.lastError = String(error);
        this.stream = null;
        this.version = null;
        socket.close();
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.setStatus("reconnecting");
      const delay = Math.min(2000, 50 * 2 ** this.retry);
      this.retry += 1;
      setTimeout(() => this.connect(), delay);
    };
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
    if (this.socket?.readyState === WebSocket.OPEN) this.subscribe(false);
  }

  receive(message) {
    if (message.format !== FORMAT.format || message.formatVersion !== FORMAT.formatVersion) {
      throw new Error(`unsupported format ${message.format} ${message.formatVersion}`);
    }
    switch (message.type) {
      case "reset":
        this.columns = message.sections.map((section) => ({ ...section, items: section.items.slice() }));
        this.stream = message.stream;
        this.version = message.version;
        this.shownQuery = this.query;
        this.lastStart = "reset";
        this.counts.resets += 1;
        this.renderAll();
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
        for (const stage of message.stages) this.apply(stage);
        this.version = message.to;
        this.counts.batches += 1;
        break;
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
    this.setStatus("live");
  }

  // The five steps of WireFormat.md, on the model and the DOM together.
  apply(stage) {
    const sections = stage.sections || {};
    const items = stage.items || {};
    const kept = new Map();

    // 1. Item removals, in old coordinates, from the last position to the first.
    const itemRemovals = [
      ...(items.deletes || []).map((change) => ({ at: change.at, id: change.id })),
      ...(items.moves || []).map((change) => ({ at: change.from, id: change.id })),
    ].sort((a, b) => compare(b.at, a.at));
    for (const { at, id } of itemRemovals) {
      const column = this.columns[at[0]];
      if (!column || column.items[at[1]]?.id !== id) throw new Error(`item ${id} is not at [${at}]`);
      const [item] = column.items.splice(at[1], 1);
      const element = this.listElement(at[0]).children[at[1]];
      element.remove();
      kept.set(id, { item, element });
    }

    // 2. Section removals, from the highest index to the lowest.
    const sectionRemovals = [
      ...(sections.deletes || []).map((change) => ({ at: change.at, id: change.id })),
      ...(sections.moves || []).map((change) => ({ at: change.from, id: change.id })),
    ].sort((a, b) => b.at - a.at);
    const keptSections = new Map();
    for (const { at, id } of sectionRemovals) {
      if (this.columns[at]?.id !== id) throw new Error(`section ${id} is not at ${at}`);
      const [section] = this.columns.splice(at, 1);
      const element = this.root.children[at];
      element.remove();
      keptSections.set(id, { section, element });
    }

    // 3. Section placements, in ascending new index.
    const sectionPlacements = [
      ...(sections.inserts || []).map((change) => ({
        at: change.at,
        section: { ...change.value, items: change.value.items.slice() },
        element: null,
      })),
      ...(sections.moves || []).map((change) => ({ at: change.to, ...keptSections.get(change.id) })),
    ].sort((a, b) => a.at - b.at);
    for (const { at, section, element } of sectionPlacements) {
      if (at > this.columns.length) throw new Error(`section placed at ${at} of ${this.columns.length}`);
      this.columns.splice(at, 0, section);
      this.root.insertBefore(element || this.sectionElement(section), this.root.children[at] || null);
    }

    // 4. Item placements, in ascending [section, item].
    const itemPlacements = [
      ...(items.inserts || []).map((change) => ({ at: change.at, item: change.value, element: null })),
      ...(items.moves || []).map((change) => ({ at: change.to, ...kept.get(change.id) })),
    ].sort((a, b) => compare(a.at, b.at));
    for (const { at, item, element } of itemPlacements) {
      const column = this.columns[at[0]];
      if (!column || at[1] > column.items.length) throw new Error(`item placed at [${at}] is out of range`);
      column.items.splice(at[1], 0, item);
      const list = this.listElement(at[0]);
      list.insertBefore(element || this.cardElement(item), list.children[at[1]] || null);
    }

    // 5. Refreshes, in place.
    for (const change of sections.updates || []) {
      const column = this.columns[change.at];
      if (column?.id !== change.value.id) throw new Error(`section ${change.value.id} is not at ${change.at}`);
      column.header = change.value.header;
      this.root.children[change.at].querySelector("h2").textContent = column.header ?? column.id;
    }
    for (const change of items.updates || []) {
      const column = this.columns[change.at[0]];
      if (column?.items[change.at[1]]?.id !== change.value.id) {
        throw new Error(`item ${change.value.id} is not at [${change.at}]`);
      }
      column.items[change.at[1]] = change.value;
      this.listElement(change.at[0]).children[change.at[1]].replaceWith(this.cardElement(change.value));
    }
  }

  listElement(index) {
    return this.root.children[index].querySelector("ol");
  }

  cardElement(card) {
    const element = document.createElement("li");
    element.className = card.owner ? "card private" : "card";
    element.dataset.id = card.id;
    if (card.owner) element.title = "private: only you see it";
    element.textContent = card.title;
    return element;
  }

  sectionElement(section) {
    const element = document.createElement("section");
    element.className = "column";
    element.dataset.id = section.id;
    const title = document.createElement("h2");
    title.textContent = section.header ?? section.id;
    const list = document.createElement("ol");
    list.className = "cards";
    for (const item of section.items) list.appendChild(this.cardElement(item));
    element.append(title, list);
    return element;
  }

  renderAll() {
    this.root.replaceChildren(...this.columns.map((section) => this.sectionElement(section)));
  }

  setStatus(state) {
    this.statusElement.className = state;
    this.statusElement.textContent =
      state === "live" ? `live · version ${this.version}` : state === "refused" ? this.lastError : state;
    this.root.dataset.version = this.version ?? "";
    this.root.dataset.state = state;
  }
}
