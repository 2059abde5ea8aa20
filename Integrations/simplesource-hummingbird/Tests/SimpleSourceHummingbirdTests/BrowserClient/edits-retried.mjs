// The browser client without WebSockets, whose first post fails (the network drops it), against a live
// notes server whose long polls hold for an hour: the edit is posted again after a pause, not only after
// the next read (which would not come: the view changes only by that edit).
// Prints "ok" or what went wrong, and exits 1.
//   node edits-retried.mjs MODULE BASE_URL

import { pathToFileURL } from "node:url";
import { fail, until } from "./checks.mjs";

delete globalThis.WebSocket;
const [modulePath, base] = process.argv.slice(2);
const { WireClient } = await import(pathToFileURL(modulePath).href);

let posts = 0;
const fetchOverNetwork = globalThis.fetch;
globalThis.fetch = (url, options) => {
  if (options?.method === "POST" && ++posts === 1) return Promise.reject(new TypeError("network error"));
  return fetchOverNetwork(url, options);
};

const client = new WireClient({ url: "ws://unused", user: "ann", reads: `${base}/read`, edits: `${base}/edit` });
client.connect();
await until("the first read", () => client.state === "live" && client.version !== null);
client.edit([{ op: "insert", items: [{ id: "n1", text: "Retried", owner: "ann" }], section: "notes" }]);
await until("the edit to be held", () => client.pending.length === 0);
if (!client.held[0].items.some((item) => item.id === "n1") || posts !== 2) {
  fail(`held ${JSON.stringify(client.held)} after ${posts} posts`);
}
client.pause();
console.log(`ok: ${posts} posts`);
process.exit(0);
