// Replays a script of the Swift side's wire messages and edits against `WireClient` in Node, and checks
// what it holds and shows after every step. Each line of the script (JSON) is one step:
//   {"receive": message}          the client receives a wire message
//   {"held": sections}            what it holds must equal these sections
//   {"shown": sections}           what it shows (held, with its pending edits on top) must equal these
//   {"edit": operations, "made": bool}  the client makes an edit: shown at once when `made`, refused by
//                                 the client itself otherwise
//   {"confirm": version}          the server confirms the client's oldest pending edit
// Prints "ok N" (N steps) or the first difference, and exits 1.
//   node replay.mjs MODULE SCRIPT

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, scriptPath] = process.argv.slice(2);
const { WireClient } = await import(pathToFileURL(modulePath).href);
const FORMAT = { format: "simplesource", formatVersion: 2 };

// JSON with its object keys sorted, so that two equal values print alike whatever their key order.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).filter((key) => value[key] !== undefined && value[key] !== null).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const client = new WireClient({ url: "ws://unused" });
const lines = readFileSync(scriptPath, "utf8").split("\n").filter((line) => line);
for (const [index, line] of lines.entries()) {
  const step = JSON.parse(line);
  const fail = (what) => {
    console.log(`step ${index + 1}: ${what}\n  step: ${line.slice(0, 2000)}`);
    process.exit(1);
  };
  if (step.receive) {
    client.receive(step.receive);
  } else if (step.held || step.shown) {
    const actual = canonical(step.held ? client.held : client.sections);
    const expected = canonical(step.held ?? step.shown);
    if (actual !== expected) fail(`${step.held ? "held" : "shown"}\n  actual:   ${actual}\n  expected: ${expected}`);
  } else if (step.edit) {
    const made = client.edit(step.edit);
    if (made !== step.made) fail(`the client ${made ? "made" : "refused"} the edit (${client.lastError})`);
  } else if (step.confirm !== undefined) {
    client.receive({ ...FORMAT, type: "confirmed", edit: client.pending[0].id, version: step.confirm });
  } else {
    fail("unknown step");
  }
}
console.log(`ok ${lines.length}`);
