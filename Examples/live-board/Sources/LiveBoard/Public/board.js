// The board's page: SimpleSourceHummingbird's wire client (`wire-client.js`: the connection, its resume,
// reads over HTTP without WebSockets, pending edits and the replica) with the board drawn on it: columns
// and cards rendered by id, and the connection's state in the status line.

import { WireClient } from "./wire-client.js";

export class BoardClient extends WireClient {
  constructor({ root, status, ...options }) {
    super(options);
    this.root = root;
    this.statusElement = status;
  }

  get columns() {
    return this.sections;
  }

  // Reuses each column's and card's element by id: a card that moved keeps its element (and focus), one
  // whose content changed gets a new one.
  show(columns) {
    this.root.dataset.pending = String(this.pending.length);
    const sections = new Map([...this.root.children].map((element) => [element.dataset.id, element]));
    const cards = new Map([...this.root.querySelectorAll("li.card")].map((element) => [element.dataset.id, element]));
    this.root.replaceChildren(...columns.map((column) => {
      const element = sections.get(column.id) ?? columnElement(column);
      element.querySelector("h2").textContent = column.header ?? column.id;
      element.querySelector("ol").replaceChildren(...column.items.map((card) => {
        const existing = cards.get(card.id);
        return existing && existing.dataset.content === JSON.stringify(card) ? existing : cardElement(card);
      }));
      return element;
    }));
  }

  // The test hooks read the state from the board's data attributes.
  showStatus(state, text) {
    this.statusElement.className = state;
    this.statusElement.textContent = text;
    Object.assign(this.root.dataset, { version: this.version ?? "", state, transport: this.transport });
  }
}

function cardElement(card) {
  const element = document.createElement("li");
  element.className = card.owner ? "card private" : "card";
  element.dataset.id = card.id;
  element.dataset.content = JSON.stringify(card);
  element.draggable = true;
  if (card.owner) element.title = "private: only you see it";
  const title = document.createElement("span");
  title.className = "title";
  title.textContent = card.title;
  const buttons = [["rename", "Rename", "✎"], ["top", "To the top of its column", "⤒"], ["delete", "Delete", "×"]];
  element.append(title, ...buttons.map(([name, hint, label]) => {
    const button = document.createElement("button");
    Object.assign(button, { className: name, title: hint, textContent: label });
    return button;
  }));
  return element;
}

function columnElement(column) {
  const element = document.createElement("section");
  element.className = "column";
  element.dataset.id = column.id;
  const list = document.createElement("ol");
  list.className = "cards";
  element.append(document.createElement("h2"), list);
  return element;
}
