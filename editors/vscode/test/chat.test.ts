// The chat view's state and HTML from recorded run events (the agent-mode run of
// docs/lsp-extensions.md): what the user sees in the view.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Chat, fromTranscript } from "../src/chat";
import { RunEvent } from "../src/protocol";
import { renderChat } from "../src/render";

const fixture = (name: string): RunEvent[] =>
  JSON.parse(readFileSync(join(__dirname, "../../test/fixtures", name), "utf8"));

function recordedChat(): Chat {
  const chat = new Chat();
  chat.addUser("What does notes.txt say? Make it 43.");
  chat.started("r1", "s1");
  for (const e of fixture("agent-run.json")) assert.equal(chat.apply(e), true);
  return chat;
}

test("a run's events become the user's message, two collapsed tool calls and the answer", () => {
  const chat = recordedChat();
  assert.deepEqual(
    chat.items.map((i) => i.type),
    ["user", "tool", "tool", "assistant"],
  );
  assert.equal(chat.running, false);
  const html = renderChat(chat);
  // Tool calls are collapsed (no `open`) and carry their results.
  const details = html.match(/<details class="tool ok" data-call="call_0_0">/);
  assert.ok(details, html);
  assert.match(html, /<span class="tool-name">read_file<\/span> <span class="tool-arg">notes.txt<\/span>/);
  assert.match(html, /The answer is 42\./);
  assert.match(html, /Approval answered: allow once\./);
  assert.match(html, /data-action="accept" data-uri="file:\/\/\/tmp\/cairn-demo\/notes.txt"/);
  // Markdown, with the code highlighted.
  assert.match(html, /<strong>42<\/strong>/);
  assert.match(html, /<pre class="hljs"><code><span class="hljs-keyword">fn<\/span>/);
  assert.doesNotMatch(html, /cairn is working/);
});

test("text deltas append to one answer while the run goes on", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "text", delta: "Hel" });
  chat.apply({ runId: "r1", kind: "text", delta: "lo" });
  assert.deepEqual(chat.items, [{ type: "assistant", text: "Hello" }]);
  assert.match(renderChat(chat), /cairn is working/);
  assert.equal(chat.apply({ runId: "other", kind: "text", delta: "x" }), false, "another run's events are not shown");
});

test("the model's text never becomes markup", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "text", delta: "<script>alert(1)</script><img src=x onerror=alert(1)>" });
  chat.apply({ runId: "r1", kind: "toolCall", callId: "c", name: "<b>x</b>", arguments: { path: "<i>" } });
  const html = renderChat(chat);
  assert.doesNotMatch(html, /<script>|<img|<b>x|<i>/);
  assert.match(html, /&lt;script&gt;/);
});

test("an approval question shows the call and one button per option, then goes away", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "toolCall", callId: "c1", name: "edit_file", arguments: { path: "a.txt" } });
  chat.apply({ runId: "r1", kind: "approval", callId: "c1", name: "edit_file", state: "asked", reason: "writes files" });
  chat.ask({
    approvalId: "a1", runId: "r1", callId: "c1", tool: "edit_file", arguments: { path: "a.txt" },
    argsHash: "h", reason: "`edit_file` writes files", options: ["allowOnce", "allowSession", "deny"],
  });
  let html = renderChat(chat);
  assert.match(html, /<details class="tool asking" data-call="c1" open>/);
  assert.match(html, /cairn asks: allow <code>edit_file<\/code>\?/);
  for (const [d, label] of [["allowOnce", "Allow once"], ["allowSession", "Allow for this session"], ["deny", "Deny"]]) {
    assert.match(html, new RegExp(`data-approval="a1" data-decision="${d}">${label}</button>`));
  }
  chat.apply({ runId: "r1", kind: "approval", callId: "c1", name: "edit_file", state: "answered", answer: "deny", reason: "writes files" });
  chat.apply({ runId: "r1", kind: "toolResult", callId: "c1", isError: true, content: "the user denied this call" });
  html = renderChat(chat);
  assert.doesNotMatch(html, /data-decision/);
  assert.match(html, /tool-status">denied</);
});

test("a protected path offers only its two options and names the path", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.ask({
    approvalId: "a2", runId: "r1", callId: "c2", tool: "read_file", arguments: { path: ".env" }, argsHash: "h",
    reason: "protected", options: ["allowOnce", "deny"], protectedPaths: [".env"],
  });
  const html = renderChat(chat);
  assert.match(html, /Protected: <code>\.env<\/code>/);
  assert.doesNotMatch(html, /allowSession/);
});

test("a cancelled run keeps the answer so far and says so", () => {
  const chat = new Chat();
  chat.addUser("long question");
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "text", delta: "The first half" });
  chat.apply({ runId: "r1", kind: "done", usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: 0, stopped: "cancelled" });
  const html = renderChat(chat);
  assert.match(html, /The first half/);
  assert.match(html, /Stopped\. The answer so far is kept/);
  assert.equal(chat.running, false);
});

test("a provider error says what failed and which setting to fix, with a retry", () => {
  const chat = new Chat();
  chat.addUser("hi");
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "error", message: "openai-compatible: authentication failed (HTTP 401); set OPENAI_API_KEY" });
  const html = renderChat(chat);
  assert.match(html, /The run failed: openai-compatible: authentication failed \(HTTP 401\); set OPENAI_API_KEY/);
  assert.match(html, /cairn\.provider\.kind/);
  assert.match(html, /data-action="retry">Retry</);
  assert.match(html, /data-action="openSettings">Open settings</);
  assert.match(html, /hi/, "the chat so far is kept");
});

test("the server stopping mid-run ends the run, keeps the chat and offers a restart", () => {
  const chat = recordedChat();
  chat.addUser("again");
  chat.started("r2", "s1");
  chat.apply({ runId: "r2", kind: "text", delta: "partial" });
  chat.serverStopped("The cairn server stopped unexpectedly", ["restart", "showLog"]);
  assert.equal(chat.running, false);
  const html = renderChat(chat);
  assert.match(html, /partial/);
  assert.match(html, /The answer is 42/);
  assert.match(html, /data-action="restart">Restart server</);
});

test("the chat survives a save and a reload, without stale questions", () => {
  const chat = recordedChat();
  chat.started("r3", "s1");
  chat.ask({ approvalId: "a", runId: "r3", callId: "x", tool: "t", arguments: {}, argsHash: "", reason: "", options: ["deny"] });
  const restored = Chat.from(JSON.parse(JSON.stringify(chat.toJSON())));
  assert.equal(restored.sessionId, "s1");
  assert.equal(restored.items.length, chat.items.length);
  assert.doesNotMatch(renderChat(restored), /data-decision/);
  assert.match(renderChat(restored), /The answer is 42/);
});

test("a stored session transcript shows as the same conversation", () => {
  const chat = fromTranscript("s9", [
    { type: "run", runId: "r", mode: "agent" },
    { type: "message", runId: "r", message: { role: "user", text: "What does notes.txt say?" } },
    { type: "message", runId: "r", message: { role: "assistant", text: "", toolCalls: [{ id: "c0", name: "read_file", arguments: "{\"path\":\"notes.txt\"}" }] } },
    { type: "message", runId: "r", message: { role: "tool", callId: "c0", name: "read_file", content: "1\thello", isError: false } },
    { type: "message", runId: "r", message: { role: "assistant", text: "It says hello." } },
    { type: "end", runId: "r", outcome: "done" },
  ]);
  assert.deepEqual(chat.items.map((i) => i.type), ["user", "tool", "assistant"]);
  const html = renderChat(chat);
  assert.match(html, /tool-arg">notes.txt</);
  assert.match(html, /It says hello\./);
});

test("the tool budget stop names the setting", () => {
  const chat = new Chat();
  chat.started("r", "s");
  chat.apply({ runId: "r", kind: "done", usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: 25, stopped: "toolBudget" });
  assert.match(renderChat(chat), /cairn\.agent\.max_tool_calls/);
});

test("events and a question that come before cairn/chat's answer are shown once it comes", () => {
  const chat = new Chat();
  chat.addUser("quick");
  assert.equal(chat.apply({ runId: "r1", kind: "toolCall", callId: "c", name: "edit_file", arguments: { path: "a" } }), false);
  assert.equal(
    chat.ask({ approvalId: "a", runId: "r1", callId: "c", tool: "edit_file", arguments: { path: "a" }, argsHash: "", reason: "writes", options: ["allowOnce", "deny"] }),
    true,
    "the view will ask, not a notification",
  );
  chat.apply({ runId: "other", kind: "text", delta: "not ours" });
  chat.started("r1", "s1");
  const html = renderChat(chat);
  assert.match(html, /tool-name">edit_file</);
  assert.match(html, /data-approval="a" data-decision="allowOnce"/);
  assert.doesNotMatch(html, /not ours/);
  // Once started, another run's question is not this view's.
  assert.equal(chat.ask({ approvalId: "b", runId: "r9", callId: "x", tool: "t", arguments: {}, argsHash: "", reason: "", options: ["deny"] }), false);
});

test("a result's raster pictures show inline under the call; SVG and bad data never do", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "toolCall", callId: "c", name: "chart_bar", arguments: {} });
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  chat.apply({
    runId: "r1",
    kind: "toolResult",
    callId: "c",
    isError: false,
    content: "wrote charts/sales.png",
    images: [
      { mimeType: "image/png", data: png },
      { mimeType: "image/svg+xml", data: "PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+" },
      { mimeType: "image/png", data: '" onerror="alert(1)' },
    ],
  });
  const html = renderChat(chat);
  const imgs = html.match(/<img [^>]*>/g) ?? [];
  assert.equal(imgs.length, 1, html);
  assert.match(imgs[0], new RegExp(`src="data:image/png;base64,${png.replace(/[+/]/g, "\\$&")}"`));
  assert.match(imgs[0], /alt="A picture from chart_bar"/);
  // Outside the collapsed block, so it shows without opening it.
  assert.ok(html.indexOf("<img") > html.indexOf("</details>"), html);
  assert.doesNotMatch(html, /svg\+xml|onerror/);
});
