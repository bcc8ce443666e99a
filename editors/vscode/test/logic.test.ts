// The plain modules behind the glue: the protocol client's approval answers, the approval
// queue, the edit review bookkeeping, the settings mapping, the problem messages, the status bar.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Approvals } from "../src/approvals";
import { CairnClient, initializationOptions, Rpc } from "../src/client";
import { EditTracker, editTarget } from "../src/edits";
import { INSTALL_COMMAND, serverStopped, startFailure } from "../src/problems";
import { ApproveParams } from "../src/protocol";
import { compactReport, contextPicks, rewindReport, turnPicks } from "../src/session";
import { configLayer, Inspected, SettingSpec } from "../src/settings";
import { statusText } from "../src/status";

const root = join(__dirname, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

class FakeRpc implements Rpc {
  requests: [string, unknown][] = [];
  handlers = new Map<string, (p: never) => unknown>();
  sendRequest(method: string, params?: unknown): Promise<unknown> {
    this.requests.push([method, params]);
    return Promise.resolve({ runId: "r", sessionId: "s", cancelled: true, sessions: [], tools: [] });
  }
  notifications: [string, unknown][] = [];
  sendNotification(method: string, params?: unknown): void {
    this.notifications.push([method, params]);
  }
  onNotification(method: string, handler: (p: never) => void): void {
    this.handlers.set(method, handler);
  }
  onRequest(method: string, handler: (p: never) => unknown): void {
    this.handlers.set(method, handler);
  }
}

const question = (over: Partial<ApproveParams> = {}): ApproveParams => ({
  approvalId: "a1", runId: "r1", callId: "c1", tool: "edit_file", arguments: {}, argsHash: "h",
  reason: "writes", options: ["allowOnce", "allowSession", "deny"], ...over,
});

test("cairn/approve is answered with the ids echoed and the user's decision", async () => {
  const rpc = new FakeRpc();
  const approvals = new Approvals();
  new CairnClient(rpc).listen({ runEvent: () => {}, mcpStatus: () => {}, approve: (p) => approvals.ask(p) });
  const handler = rpc.handlers.get("cairn/approve") as (p: ApproveParams) => Promise<unknown>;
  const answer = handler(question());
  assert.equal(approvals.pending().length, 1);
  assert.equal(approvals.answer("a1", "allowSession"), true);
  assert.deepEqual(await answer, { approvalId: "a1", runId: "r1", callId: "c1", decision: "allowSession" });
  assert.equal(approvals.answer("a1", "deny"), false, "answered once");
});

test("a protected path's allowSession becomes allowOnce; a failing UI denies", async () => {
  const rpc = new FakeRpc();
  let fail = false;
  new CairnClient(rpc).listen({
    runEvent: () => {}, mcpStatus: () => {},
    approve: () => (fail ? Promise.reject(new Error("view gone")) : Promise.resolve("allowSession")),
  });
  const handler = rpc.handlers.get("cairn/approve") as (p: ApproveParams) => Promise<{ decision: string }>;
  assert.equal((await handler(question({ options: ["allowOnce", "deny"] }))).decision, "allowOnce");
  fail = true;
  assert.equal((await handler(question())).decision, "deny");
});

test("a run's end withdraws its questions as deny", async () => {
  const approvals = new Approvals();
  const a = approvals.ask(question());
  const b = approvals.ask(question({ approvalId: "a2", runId: "r2" }));
  assert.equal(approvals.withdraw("r1"), 1);
  assert.equal(await a, "deny");
  assert.equal(approvals.pending().length, 1);
  approvals.answer("a2", "allowOnce");
  assert.equal(await b, "allowOnce");
});

test("requests go out under the documented method names", async () => {
  const rpc = new FakeRpc();
  const client = new CairnClient(rpc);
  await client.chat({ message: "hi", mode: "agent" });
  await client.cancel("r");
  await client.sessions();
  await client.tools();
  await client.mcpStatus();
  await client.trustWorkspace();
  assert.deepEqual(rpc.requests.map(([m]) => m), [
    "cairn/chat", "cairn/cancel", "cairn/sessions", "cairn/tools", "workspace/executeCommand", "workspace/executeCommand",
  ]);
  assert.deepEqual(rpc.requests[4][1], { command: "cairn.mcpStatus", arguments: [] });
  assert.deepEqual(rpc.requests[5][1], { command: "cairn.trustWorkspace", arguments: [] });
  assert.deepEqual(initializationOptions({ a: 1 }), { config: { a: 1 }, capabilities: { approvals: true, diagnostics: true } });
});

test("an edit opens a review with the text from before; reject gives it back", () => {
  const edits = new EditTracker();
  const uri = editTarget("file:///ws", "edit_file", { path: "src/a b.txt" });
  assert.equal(uri, "file:///ws/src/a%20b.txt");
  assert.equal(editTarget("file:///ws", "read_file", { path: "x" }), undefined);
  edits.snapshot("c1", uri!, "old\n");
  assert.equal(edits.edited("c1", uri!, true)?.before, "old\n");
  edits.snapshot("c2", uri!, "mid\n");
  assert.equal(edits.edited("c2", uri!, true)?.edits, 2, "the first snapshot stays the base");
  assert.equal(edits.reject(uri!)?.before, "old\n");
  assert.equal(edits.pending().length, 0);
  edits.snapshot("c3", uri!, "x");
  assert.equal(edits.edited("c3", uri!, false), undefined, "a rejected edit has nothing to review");
  edits.snapshot("c4", uri!, "x");
  edits.edited("c4", uri!, true);
  assert.equal(edits.accept(uri!), true);
  assert.equal(edits.get(uri!), undefined);
});

function inspector(values: Record<string, Inspected>): (key: string) => Inspected | undefined {
  return (key) => values[key];
}

test("only settings the user set are sent, nested by their dotted names", () => {
  const specs: Record<string, SettingSpec> = pkg.contributes.configuration.properties;
  const layer = configLayer(
    specs,
    inspector({
      "cairn.path": { globalValue: "/opt/cairn" },
      "cairn.provider.model": { globalValue: "qwen", workspaceValue: "llama" },
      "cairn.agent.context_max_bytes": { workspaceFolderValue: 1000, globalValue: 5 },
      "cairn.provider.base_url": { globalValue: "http://mine", workspaceValue: "http://evil" },
      "cairn.policy.effects.write": { workspaceValue: "allow" },
      "cairn.log.level": { globalValue: null },
    }),
  );
  assert.deepEqual(layer, {
    provider: { model: "llama", base_url: "http://mine" },
    agent: { context_max_bytes: 1000 },
  });
});

test("every generated setting maps to a configuration key and the editor-only one does not", () => {
  const specs: Record<string, SettingSpec> = pkg.contributes.configuration.properties;
  const keys = Object.keys(specs);
  assert.ok(keys.length > 50, `${keys.length} settings`);
  const all = configLayer(specs, () => ({ globalValue: "v" }));
  assert.equal((all as { path?: unknown }).path, undefined);
  assert.equal((all.provider as Record<string, unknown>).model, "v");
  assert.equal(keys.filter((k) => !k.startsWith("cairn.")).length, 0);
});

test("a missing binary says how to install it and which setting to fix", () => {
  const err = Object.assign(new Error("spawn cairn ENOENT"), { code: "ENOENT" });
  const p = startFailure("cairn", err);
  assert.match(p.text, /cairn is not installed or not on the PATH/);
  assert.ok(p.text.includes(INSTALL_COMMAND));
  assert.match(p.text, /cairn\.path/);
  assert.deepEqual(p.actions, ["install", "openSettings", "restart"]);
  assert.match(startFailure("/x", Object.assign(new Error("EACCES"), { code: "EACCES" })).text, /not executable/);
  assert.match(serverStopped(true).text, /in the middle of this answer\. The chat so far is kept/);
});

test("the status bar counts running servers and flags failures and trust", () => {
  const s = statusText({
    servers: [
      { name: "cairn-files", transport: "inProcess", state: "running", tools: 4 },
      { name: "gone", transport: "stdio", state: "failed", reason: "cannot start" },
    ],
    waitingForTrust: ["evil"],
  });
  assert.equal(s.text, "$(error) cairn MCP 1/2 · 1 untrusted");
  assert.match(s.tooltip, /gone \(stdio\): failed — cannot start/);
  assert.match(s.tooltip, /Trust This Workspace/);
  assert.equal(statusText({ servers: [{ name: "a", transport: "stdio", state: "running", tools: 1 }] }).text, "$(plug) cairn MCP 1/1");
});

test("every command in package.json is registered by the extension, and the view exists", () => {
  const source = readFileSync(join(root, "src/extension.ts"), "utf8");
  for (const c of pkg.contributes.commands as { command: string }[]) {
    assert.ok(source.includes(`cmd("${c.command}"`), `${c.command} not registered`);
  }
  assert.ok(source.includes('"cairn.chatView"'));
  assert.equal(pkg.contributes.views.cairn[0].id, "cairn.chatView");
});

test("rewind, compact and context requests go out under their method names", async () => {
  const rpc = new FakeRpc();
  const client = new CairnClient(rpc);
  await client.checkpoints("s").catch(() => undefined);
  await client.rewind("s", 2);
  await client.compact("s");
  await client.context({ uri: "file:///ws/src/a.rs" });
  await client.diagnostics({ uri: "file:///ws/a.rs", diagnostics: [] });
  assert.deepEqual(rpc.requests, [
    ["cairn/checkpoints", { sessionId: "s" }],
    ["cairn/rewind", { sessionId: "s", turn: 2 }],
    ["cairn/compact", { sessionId: "s" }],
    ["cairn/context", { uri: "file:///ws/src/a.rs" }],
  ]);
  assert.deepEqual(rpc.notifications, [["cairn/diagnostics", { uri: "file:///ws/a.rs", diagnostics: [] }]]);
});

test("the rewind pick lists the latest turn first with the files it changed", () => {
  const picks = turnPicks([
    { turn: 1, runId: "r1", message: "Add a parser", files: ["src/a.rs", "src/b.rs"] },
    { turn: 2, runId: "r2", message: "Explain it", files: [] },
  ]);
  assert.deepEqual(picks, [
    { turn: 2, label: "Turn 2: Explain it", description: "changed no files", detail: undefined },
    { turn: 1, label: "Turn 1: Add a parser", description: "changed 2 files", detail: "src/a.rs, src/b.rs" },
  ]);
});

test("a rewind's report names the restored files and warns about conflicts and failures", () => {
  assert.deepEqual(rewindReport(1, { restored: ["a.txt", "b.txt"], conflicts: [], failed: [] }), {
    info: "cairn: rewound to before turn 1; restored 2 files: a.txt, b.txt.",
  });
  const r = rewindReport(2, {
    restored: ["a.txt"],
    conflicts: [{ path: "c.txt", reason: "changed since cairn wrote it" }],
    failed: [{ path: "d.bin", reason: "not checkpointed: over the size limit" }],
  });
  assert.equal(r.info, "cairn: rewound to before turn 2; restored 1 file: a.txt.");
  assert.equal(
    r.warning,
    "cairn: 2 not restored: c.txt (left as it is: changed since cairn wrote it); d.bin (not restored: not checkpointed: over the size limit).",
  );
  assert.equal(rewindReport(3, { restored: [], conflicts: [], failed: [] }).info, "cairn: rewound to before turn 3; no file needed restoring.");
});

test("compaction and context reports", () => {
  assert.equal(
    compactReport({ compacted: true, turns: 12, tokensBefore: 30210, tokensAfter: 2150 }),
    "cairn: summarised 12 older turns: 30,210 → 2,150 tokens.",
  );
  assert.equal(compactReport({ compacted: false, reason: "only 1 turn so far" }), "cairn: nothing to compact: only 1 turn so far");
  const c = contextPicks({
    rules: [
      { path: "/ws/AGENTS.md", bytes: 812, included: 812, truncated: false },
      { path: "/ws/src/AGENTS.md", bytes: 20000, included: 15572, truncated: true },
    ],
    maxBytes: 16384,
  });
  assert.equal(c.title, "cairn: 2 project rules files, 16,384 of at most 16,384 bytes");
  assert.deepEqual(c.items, [
    { label: "/ws/AGENTS.md", description: "812 bytes" },
    { label: "/ws/src/AGENTS.md", description: "15,572 of 20,000 bytes (cut at the limit)" },
  ]);
  assert.equal(contextPicks({ rules: [], maxBytes: 16384 }).title, "cairn: no project rules (AGENTS.md) apply here");
});
