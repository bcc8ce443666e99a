// The editor's diagnostics for the agent: VS Code's problems become LSP diagnostics (severity
// 1-4, the code's value), cairn's own are not echoed back, files outside the workspace are not
// sent, and changes are sent once they settle (a fake clock runs the debounce).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Clock, convert, DiagnosticsSender, EditorDiagnostic, toLsp } from "../src/diagnostics";
import { DiagnosticsParams } from "../src/protocol";

const at = (line: number, severity: number, message: string, more: Partial<EditorDiagnostic> = {}): EditorDiagnostic => ({
  range: { start: { line, character: 4 }, end: { line, character: 9 } },
  severity,
  message,
  ...more,
});

class FakeClock implements Clock {
  time = 0;
  timers = new Map<number, { at: number; f: () => void }>();
  private next = 1;
  setTimeout(f: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.time + ms, f });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].f();
    }
    this.time = end;
  }
}

const WS = "file:///ws/";

function setup() {
  const clock = new FakeClock();
  const sent: DiagnosticsParams[] = [];
  const current = new Map<string, EditorDiagnostic[]>();
  const sender = new DiagnosticsSender({
    send: (p) => sent.push(p),
    read: (uri) => current.get(uri) ?? [],
    inWorkspace: (uri) => uri.startsWith(WS),
    delayMs: 300,
    maxWaitMs: 2000,
    clock,
  });
  return { clock, sent, current, sender };
}

test("a VS Code diagnostic becomes LSP's: severity one higher, the code's value, 0-based lines kept", () => {
  assert.deepEqual(toLsp(at(2, 0, "expected `;`", { source: "rustc", code: { value: "E0308" } })), {
    range: { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } },
    severity: 1,
    message: "expected `;`",
    source: "rustc",
    code: "E0308",
  });
  assert.deepEqual([0, 1, 2, 3].map((s) => toLsp(at(0, s, "m")).severity), [1, 2, 3, 4]);
  assert.equal(toLsp(at(0, 1, "m", { code: 7 })).code, 7);
  assert.equal("source" in toLsp(at(0, 1, "m")), false, "no source, no field");
});

test("cairn's own diagnostics are not sent back to it", () => {
  const list = convert([at(1, 0, "real", { source: "eslint" }), at(1, 0, "mine", { source: "cairn" }), at(1, 0, "mine too", { source: "Cairn" })]);
  assert.deepEqual(list.map((d) => d.message), ["real"]);
});

test("at start every workspace file with diagnostics is sent once; others are not", () => {
  const { sent, sender } = setup();
  sender.sendAll([
    [`${WS}a.rs`, [at(3, 0, "mismatched types")]],
    [`${WS}clean.rs`, []],
    ["file:///elsewhere/b.rs", [at(1, 1, "outside")]],
    ["untitled:Untitled-1", [at(1, 1, "unsaved")]],
    [`${WS}gen.rs`, [at(1, 1, "only cairn's", { source: "cairn" })]],
  ]);
  assert.deepEqual(sent.map((p) => [p.uri, p.diagnostics.map((d) => d.message)]), [[`${WS}a.rs`, ["mismatched types"]]]);
});

test("changes are sent once they settle, each file once, with its whole current list", () => {
  const { clock, sent, current, sender } = setup();
  current.set(`${WS}a.rs`, [at(1, 0, "first")]);
  sender.changed([`${WS}a.rs`]);
  clock.advance(200);
  current.set(`${WS}a.rs`, [at(1, 0, "first"), at(5, 1, "second")]);
  current.set(`${WS}b.rs`, [at(2, 1, "unused")]);
  sender.changed([`${WS}a.rs`, `${WS}b.rs`, "file:///elsewhere/c.rs"]);
  clock.advance(299);
  assert.equal(sent.length, 0, "still changing");
  clock.advance(1);
  assert.deepEqual(sent.map((p) => [p.uri, p.diagnostics.length]), [[`${WS}a.rs`, 2], [`${WS}b.rs`, 1]]);
});

test("a file whose problems are gone is cleared with an empty list; a file never sent is not", () => {
  const { clock, sent, current, sender } = setup();
  sender.sendAll([[`${WS}a.rs`, [at(1, 0, "broken")]]]);
  current.set(`${WS}a.rs`, []);
  sender.changed([`${WS}a.rs`, `${WS}never.rs`]);
  clock.advance(300);
  assert.deepEqual(sent.slice(1), [{ uri: `${WS}a.rs`, diagnostics: [] }]);
  sender.changed([`${WS}a.rs`]);
  clock.advance(300);
  assert.equal(sent.length, 2, "cleared once");
});

test("a file whose list did not change is not sent again", () => {
  const { clock, sent, current, sender } = setup();
  current.set(`${WS}a.rs`, [at(1, 0, "broken")]);
  sender.sendAll([[`${WS}a.rs`, current.get(`${WS}a.rs`)!]]);
  sender.changed([`${WS}a.rs`]);
  clock.advance(300);
  assert.equal(sent.length, 1);
  current.set(`${WS}a.rs`, [at(1, 0, "broken"), at(2, 0, "also")]);
  sender.changed([`${WS}a.rs`]);
  clock.advance(300);
  assert.equal(sent.length, 2);
});

test("diagnostics that never stop changing are still sent every two seconds", () => {
  const { clock, sent, current, sender } = setup();
  for (let t = 0; t < 2500; t += 100) {
    current.set(`${WS}a.rs`, [at(1, 0, `typing ${t}`)]);
    sender.changed([`${WS}a.rs`]);
    clock.advance(100);
  }
  assert.equal(sent.length, 1, "one send in the first 2.5 s of constant change");
  sender.dispose();
  clock.advance(5000);
  assert.equal(sent.length, 1, "nothing after dispose");
});
