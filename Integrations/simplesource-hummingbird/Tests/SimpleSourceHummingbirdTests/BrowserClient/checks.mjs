// What the Node checks of the browser client share: a failure that ends the run, and a wait for a condition.

// Prints "failed: text" and exits 1.
export function fail(text) {
  console.log(`failed: ${text}`);
  process.exit(1);
}

// Waits until `condition()` holds, checking every 10 ms; after a minute, fails naming `what` (a hang
// guard, not a verdict on speed).
export async function until(what, condition) {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) fail(`waited a minute for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
