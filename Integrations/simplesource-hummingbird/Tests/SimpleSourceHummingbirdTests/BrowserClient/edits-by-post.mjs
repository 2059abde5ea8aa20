// The browser client without WebSockets against a live notes server: it follows its view by reads and
// posts its edits. Checks that an edit is shown at once and stays shown until what is read shows it, that
// one the server refuses is rolled back, and that one confirmed at a version its view never shows (a note
// outside the search it follows) stops being shown once a read covers that version. Edits are posted in
// the order they were made: one naming what the one before it made is made too.
// Prints "ok" or what went wrong, and exits 1.
//   node edits-by-post.mjs MODULE BASE_URL

import { pathToFileURL } from "node:url";
import { fail, until } from "./checks.mjs";

delete globalThis.WebSocket; // a browser without WebSockets, whatever Node's version
const [modulePath, base] = process.argv.slice(2);
const { WireClient } = await import(pathToFileURL(modulePath).href);

const ids = (sections) => sections.flatMap((section) => section.items.map((item) => item.id));

const client = new WireClient({ url: "ws://unused", user: "ann", reads: `${base}/read`, edits: `${base}/edit` });
client.connect();
await until("the first read", () => client.state === "live" && client.version !== null);
if (client.transport !== "reads") fail(`followed by ${client.transport}`);

// A note of Ann's: shown at once, confirmed, then held.
if (!client.edit([{ op: "insert", items: [{ id: "n1", text: "New idea", owner: "ann" }], section: "notes" }])) {
  fail(`the insert was refused by the client: ${client.lastError}`);
}
if (!ids(client.sections).includes("n1")) fail("the insert is not shown at once");
await until("the insert to be held", () => ids(client.held).includes("n1"));
await until("the insert to leave the pending edits", () => client.pending.length === 0);
if (client.counts.confirmed !== 1) fail(`confirmed ${client.counts.confirmed}`);
if (!ids(client.sections).includes("n1")) fail("the held insert is not shown");

// Two edits at once, the second naming what the first makes: posted one after the other, both made.
client.edit([{ op: "insert", items: [{ id: "n3", text: "Draft", owner: "ann" }], section: "notes" }]);
client.edit([{ op: "patch", id: "n3", patch: { text: "Final idea" } }]);
await until("both to be held", () => client.pending.length === 0);
const n3 = client.held.flatMap((section) => section.items).find((item) => item.id === "n3");
if (n3?.text !== "Final idea" || client.counts.confirmed !== 3) {
  fail(`n3 is ${JSON.stringify(n3)}, ${client.counts.confirmed} confirmed: ${client.lastError}`);
}

// An id Ann cannot see is taken (Bob's note): the server refuses, and the client rolls it back.
client.edit([{ op: "insert", items: [{ id: "bobs", text: "Mine", owner: "ann" }], section: "notes" }]);
if (!ids(client.sections).includes("bobs")) fail("the second insert is not shown at once");
await until("the refusal", () => client.pending.length === 0);
if (ids(client.sections).includes("bobs")) fail("the refused insert is still shown");
if (client.state !== "refused" || !client.lastError) fail(`state ${client.state}, ${client.lastError}`);

// Following a search: a note outside it is shown at once (the client cannot tell), confirmed at a version
// the view never shows, and gone once a read covers that version.
client.setQuery({ name: "search", parameters: { text: "idea" } });
await until("the search's reset", () => client.shownQuery?.name === "search" && client.state === "live");
client.edit([{ op: "insert", items: [{ id: "n2", text: "Groceries", owner: "ann" }], section: "notes" }]);
if (!ids(client.sections).includes("n2")) fail("the third insert is not shown at once");
await until("the unseen insert to leave the pending edits", () => client.pending.length === 0);
if (ids(client.sections).includes("n2")) fail("an insert outside the search is still shown");
if (ids(client.held).join() !== "n1,n3") fail(`the search holds ${ids(client.held)}`);
client.pause();
console.log(`ok: ${client.counts.confirmed} confirmed, covered ${client.covered}`);
