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
