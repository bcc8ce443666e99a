// The extension's protocol client against the real `cairn lsp` ($CAIRN_BIN) and the scripted
// model (`scripted-model` next to it, or $SCRIPTED_MODEL): a chat with a tool call and an
// approval answered in the view, a run stopped half way, and a provider error (the server dying is
// extension.test.ts's, through the extension's own handler).
// Each asserts what the chat view would show.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { Approvals } from "../src/approvals";
import { Chat } from "../src/chat";
import { CairnClient, initializationOptions } from "../src/client";
import { ApproveParams, McpStatus, RunEvent } from "../src/protocol";
import { renderChat } from "../src/render";

const CAIRN = process.env.CAIRN_BIN;
const MODEL = process.env.SCRIPTED_MODEL || (CAIRN ? join(dirname(CAIRN), "scripted-model") : "");
const skip = CAIRN ? false : "CAIRN_BIN is not set";
if (!CAIRN) process.stderr.write("server.test: skipped: set CAIRN_BIN to target/debug/cairn to test against the real server\n");

interface Session {
  chat: Chat;
  client: CairnClient;
  approvals: Approvals;
  questions: ApproveParams[];
  events: RunEvent[];
  status: McpStatus[];
  server: ChildProcess;
  connection: MessageConnection;
  ws: string;
  /** Resolves when the server's process is gone. */
  exited: Promise<void>;
  /** Waits for an event the predicate accepts. */
  until(pred: (e: RunEvent) => boolean, what: string): Promise<RunEvent>;
  close(): Promise<void>;
}

async function startModel(script: unknown[]): Promise<{ url: string; proc: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-vscode-model-"));
  const file = join(dir, "script.json");
  writeFileSync(file, JSON.stringify(script));
  assert.ok(existsSync(MODEL), `scripted-model not found at ${MODEL} (cargo build -p cairn-test-support)`);
  const proc = spawn(MODEL, ["--format", "openai", "--script", file], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n")) resolve(line.trim());
    });
    proc.on("exit", (code) => reject(new Error(`scripted-model exited with ${code}`)));
  });
  return { url, proc };
}

async function start(script: unknown[]): Promise<Session> {
  const model = await startModel(script);
  const dir = mkdtempSync(join(tmpdir(), "cairn-vscode-"));
  const ws = join(dir, "ws");
  const home = join(dir, "home");
  mkdirSync(ws);
  mkdirSync(home);
  writeFileSync(join(ws, "notes.txt"), "Hello from the demo.\nThe answer is 42.\n");
  writeFileSync(
    join(ws, "sales.csv"),
    "month,region,revenue\n" +
      ["2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06"]
        .flatMap((m, i) => [`${m},Online,${12 + 3 * i}`, `${m},Retail,${9 + (i % 3)}`, `${m},Partners,${3 + i}`])
        .join("\n") +
      "\n",
  );
  const server = spawn(CAIRN!, ["lsp"], {
    cwd: ws,
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
      CAIRN_LOG: "cairn=debug,warn",
      CAIRN_PROVIDER__RETRY_BASE_DELAY_MS: "10",
      CAIRN_PROVIDER__MAX_RETRIES: "0",
      CAIRN_MODEL: "scripted",
      CAIRN_SELECTION__FILTER: "false",
      HF_HUB_OFFLINE: "1",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/cairn-vscode-no-bus",
      OPENAI_BASE_URL: model.url,
    },
  });
  let stderr = "";
  server.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => server.on("exit", () => resolve()));
  const connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  const chat = new Chat();
  const approvals = new Approvals();
  const questions: ApproveParams[] = [];
  const events: RunEvent[] = [];
  const status: McpStatus[] = [];
  const waiters: { pred: (e: RunEvent) => boolean; resolve: (e: RunEvent) => void }[] = [];
  // The same adapter as the extension's over LanguageClient (src/extension.ts).
  const client = new CairnClient({
    sendRequest: (method, params) => connection.sendRequest(method, params),
    sendNotification: (method, params) => connection.sendNotification(method, params),
    onNotification: (method, handler) => connection.onNotification(method, handler as (p: unknown) => void),
    onRequest: (method, handler) => connection.onRequest(method, handler as (p: unknown) => unknown),
  });
  // What the extension does with each (src/extension.ts): the view's state and the queue.
  client.listen({
    runEvent: (e) => {
      events.push(e);
      if (e.kind === "done" || e.kind === "error") approvals.withdraw(e.runId);
      chat.apply(e);
      for (const w of [...waiters]) if (w.pred(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    },
    approve: (p) => {
      questions.push(p);
      chat.ask(p);
      return approvals.ask(p);
    },
    mcpStatus: (s) => status.push(s),
  });
  // The rest of what a client answers: progress tokens, registrations, edits of open files.
  connection.onRequest("window/workDoneProgress/create", () => null);
  connection.onRequest("client/registerCapability", () => null);
  connection.onRequest("window/showMessageRequest", () => null);
  connection.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
  connection.onNotification("window/showMessage", () => {});
  connection.onNotification("window/logMessage", () => {});
  connection.onNotification("$/progress", () => {});
  connection.listen();
  const root = pathToFileURL(ws).toString();
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name: "ws" }],
    capabilities: { general: { positionEncodings: ["utf-16"] }, window: { workDoneProgress: true } },
    initializationOptions: initializationOptions({ agent: { max_tool_calls: 5 } }),
  });
  await connection.sendNotification("initialized", {});
  return {
    chat, client, approvals, questions, events, status, server, connection, ws, exited,
    until: (pred, what) =>
      new Promise((resolve, reject) => {
        const hit = events.find(pred);
        if (hit) return resolve(hit);
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events)}\nserver log:\n${stderr.slice(-3000)}`)), 20000);
        waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      }),
    close: async () => {
      try {
        if (server.exitCode === null && server.signalCode === null) {
          await Promise.resolve()
            .then(() => connection.sendRequest("shutdown"))
            .then(() => connection.sendNotification("exit"))
            .catch(() => undefined);
          await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        }
      } finally {
        connection.dispose();
        server.kill("SIGKILL");
        model.proc.kill("SIGKILL");
        for (const stream of [server.stdin, server.stdout, server.stderr, model.proc.stdout]) stream?.destroy();
      }
    },
  };
}

async function send(s: Session, message: string, mode: "chat" | "agent"): Promise<string> {
  s.chat.addUser(message);
  const r = await s.client.chat({ message, mode, sessionId: s.chat.sessionId });
  s.chat.started(r.runId, r.sessionId);
  return r.runId;
}

test("a chat with a tool call and an approval answered in the view", { skip, timeout: 60000 }, async () => {
  const s = await start([
    { toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
    { toolCalls: [{ name: "edit_file", arguments: { path: "notes.txt", old_string: "42", new_string: "43" } }] },
    { text: "Changed **42** to 43:\n\n```rust\nfn answer() -> u32 { 43 }\n```" },
  ]);
  try {
    const runId = await send(s, "What does notes.txt say? Make it 43.", "agent");
    // The question reaches the view as a cairn/approve request with the call's arguments.
    await s.until((e) => e.kind === "approval" && e.state === "asked", "the approval question");
    const deadline = Date.now() + 10000;
    while (s.approvals.pending().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const [q] = s.approvals.pending();
    assert.ok(q, "cairn/approve was sent to the client that announced capabilities.approvals");
    assert.equal(q.tool, "edit_file");
    assert.deepEqual(q.arguments, { path: "notes.txt", old_string: "42", new_string: "43" });
    assert.deepEqual(q.options, ["allowOnce", "allowSession", "deny"]);
    const asking = renderChat(s.chat);
    assert.match(asking, /cairn asks: allow <code>edit_file<\/code>\?/);
    assert.match(asking, new RegExp(`data-approval="${q.approvalId}" data-decision="allowOnce">Allow once</button>`));
    assert.equal(readFileSync(join(s.ws, "notes.txt"), "utf8").includes("42"), true, "nothing written before the answer");
    // The user clicks "Allow once".
    assert.equal(s.approvals.answer(q.approvalId, "allowOnce"), true);
    const done = await s.until((e) => e.runId === runId && (e.kind === "done" || e.kind === "error"), "the end of the run");
    assert.equal(done.kind, "done", JSON.stringify(done));
    assert.equal(readFileSync(join(s.ws, "notes.txt"), "utf8"), "Hello from the demo.\nThe answer is 43.\n");
    assert.deepEqual(s.chat.items.map((i) => i.type), ["user", "tool", "tool", "assistant"]);
    if (process.env.CAIRN_RECORD_EVENTS) {
      // scripts/screenshot.mjs renders these (test/fixtures/recorded-run.json).
      const recorded = s.events.filter((e) => e.runId === runId);
      writeFileSync(process.env.CAIRN_RECORD_EVENTS, JSON.stringify(recorded, null, 1).replaceAll(s.ws, "/home/you/demo") + "\n");
    }
    const html = renderChat(s.chat);
    assert.match(html, /<details class="tool ok" data-call="[^"]+"><summary><span class="tool-icon">⚙<\/span> <span class="tool-name">read_file<\/span> <span class="tool-arg">notes.txt<\/span>/);
    assert.match(html, /The answer is 42\./, "read_file's result is in its collapsed block");
    assert.match(html, /Approval answered: allow once\./);
    assert.match(html, /Edited <code>[^<]*notes\.txt<\/code> <button[^>]*data-action="diff"/);
    assert.match(html, /<strong>42<\/strong>/);
    assert.match(html, /<span class="hljs-keyword">fn<\/span>/);
    assert.doesNotMatch(html, /data-decision/);
    // The session is listed and reloads as the same conversation.
    const sessions = await s.client.sessions();
    assert.ok(sessions.some((x) => x.sessionId === s.chat.sessionId && x.title.startsWith("What does notes.txt say")));
    const tools = await s.client.tools();
    assert.ok(tools.some((t) => t.name === "edit_file" && t.policy === "ask"));
    const status = await s.client.mcpStatus();
    assert.ok(status.servers.some((x) => x.name === "cairn-files" && x.state === "running"), JSON.stringify(status));
  } finally {
    await s.close();
  }
});

test("a chart a data tool draws is shown in the chat view", { skip, timeout: 60000 }, async () => {
  const s = await start([
    {
      toolCalls: [
        {
          name: "chart_bar",
          arguments: {
            file: "sales.csv",
            sql: "SELECT month, sum(CASE WHEN region = 'Online' THEN revenue END) AS \"Online\", sum(CASE WHEN region = 'Retail' THEN revenue END) AS \"Retail\", sum(CASE WHEN region = 'Partners' THEN revenue END) AS \"Partners\" FROM t GROUP BY month ORDER BY month",
            title: "Revenue by month and channel",
            output: "charts/revenue",
          },
        },
      ],
    },
    { text: "Online revenue grows every month and leads throughout; Partners doubled since January. The chart is in `charts/revenue.png` (and `.svg`)." },
  ]);
  try {
    const runId = await send(s, "Plot revenue by month and channel from sales.csv", "agent");
    await s.until((e) => e.kind === "approval" && e.state === "asked", "the approval question");
    const deadline = Date.now() + 10000;
    while (s.approvals.pending().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const [q] = s.approvals.pending();
    assert.equal(q.tool, "chart_bar");
    assert.equal(s.approvals.answer(q.approvalId, "allowOnce"), true);
    const done = await s.until((e) => e.runId === runId && (e.kind === "done" || e.kind === "error"), "the end of the run");
    assert.equal(done.kind, "done", JSON.stringify(done));
    const png = readFileSync(join(s.ws, "charts/revenue.png"));
    assert.equal(png.subarray(1, 4).toString(), "PNG");
    const html = renderChat(s.chat);
    // The picture is inline under the call, the same bytes as the file written.
    const img = html.match(/<img class="result-image" alt="A picture from chart_bar" src="data:image\/png;base64,([^"]+)">/);
    assert.ok(img, "the chart is shown inline");
    assert.deepEqual(Buffer.from(img[1], "base64"), png);
    assert.match(html, /charts\/revenue\.svg and charts\/revenue\.png/);
    if (process.env.CAIRN_RECORD_CHART) {
      // scripts/screenshot.ts renders these (test/fixtures/chart-run.json) for the README.
      const recorded = s.events.filter((e) => e.runId === runId);
      writeFileSync(process.env.CAIRN_RECORD_CHART, JSON.stringify(recorded, null, 1).replaceAll(s.ws, "/home/you/demo") + "\n");
    }
  } finally {
    await s.close();
  }
});

test("a run stopped half way keeps the answer so far and says it stopped", { skip, timeout: 60000 }, async () => {
  const s = await start([{ text: "The first half of the answer", fault: { kind: "stallMidStream" } }]);
  try {
    const runId = await send(s, "Tell me a long story", "chat");
    await s.until((e) => e.kind === "text", "the first words");
    const shown = s.events.filter((e) => e.kind === "text").map((e) => (e.kind === "text" ? e.delta : "")).join("").trim();
    assert.equal(await s.client.cancel(runId), true);
    const done = await s.until((e) => e.kind === "done" || e.kind === "error", "the end");
    assert.equal(done.kind === "done" && done.stopped, "cancelled");
    const html = renderChat(s.chat);
    assert.ok(shown.length > 0 && html.includes(shown), `the words shown before the stop stay: ${shown}`);
    assert.match(html, /Stopped\. The answer so far is kept/);
    assert.equal(s.chat.running, false);
  } finally {
    await s.close();
  }
});

test("a provider error says what failed and what to set, and the chat stays", { skip, timeout: 60000 }, async () => {
  const s = await start([{ fault: { kind: "status", status: 401, body: "{\"error\": {\"message\": \"bad key\"}}" } }]);
  try {
    await send(s, "hello?", "chat");
    const end = await s.until((e) => e.kind === "done" || e.kind === "error", "the end");
    assert.equal(end.kind, "error");
    const html = renderChat(s.chat);
    assert.match(html, /The run failed: [^<]*401/);
    assert.match(html, /data-action="retry">Retry</);
    assert.match(html, /hello\?/);
  } finally {
    await s.close();
  }
});
