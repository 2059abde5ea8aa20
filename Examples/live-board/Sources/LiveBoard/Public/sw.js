// The live board's service worker: keeps the page's shell (the page and its scripts) so that a reload
// works offline. Network first: online, the server's copy is shown and kept; offline, the kept copy.
// Nothing else is cached: the board itself comes only from the WebSocket and the page's own replica.

const CACHE = "live-board-shell-2";
const SHELL = new Set(["/", "/index.html", "/board.js", "/wire-client.js"]);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(["/", "/board.js", "/wire-client.js"])));
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin || !SHELL.has(url.pathname)) return;
  const path = url.pathname === "/index.html" ? "/" : url.pathname;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(path, copy)));
        }
        return response;
      })
      .catch(() => caches.match(path).then((kept) => kept ?? Response.error())));
});
