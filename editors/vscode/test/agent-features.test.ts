// Issue 23's run events in the chat view, from a recorded run: the plan as a checklist updated in
// place, a sub-agent's events folded under its task call, hooks (a failure is a warning, a
// denial says why), and the compaction notice with its summary folded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Chat, PlanItem, ToolItem } from "../src/chat";
import { RunEvent } from "../src/protocol";
import { renderChat, thousands } from "../src/render";

const events: RunEvent[] = JSON.parse(
  readFileSync(join(__dirname, "../../test/fixtures/agent-features-run.json"), "utf8"),
);

function played(upTo = events.length): Chat {
  const chat = new Chat();
  chat.addUser("Fix the tokenizer bug.", "agent");
  chat.started("r1", "s1");
  for (const e of events.slice(0, upTo)) assert.equal(chat.apply(e), true);
  return chat;
}

test("the run shows one plan, a task with its sub-agent, two hooks and the compaction", () => {
  const chat = played();
  assert.deepEqual(
    chat.items.map((i) => i.type),
    ["user", "compacted", "tool", "plan", "tool", "tool", "hook", "hook", "assistant"],
  );
  assert.equal(chat.running, false);
});

test("the plan is one checklist that the latest list replaces in place", () => {
  const first = renderChat(played(3));
  assert.match(first, /Plan · 0\/3 done/);
  assert.match(first, /<li class="step inProgress" title="in progress"><span class="step-icon">◐<\/span> Read the parser<\/li>/);
  assert.match(first, /<li class="step pending" title="pending"><span class="step-icon">○<\/span> Run the tests<\/li>/);
  const chat = played();
  const plans = chat.items.filter((i): i is PlanItem => i.type === "plan");
  assert.equal(plans.length, 1, "a second plan event updates the first");
  const html = renderChat(chat);
  assert.equal(html.match(/class="plan"/g)?.length, 1);
  assert.match(html, /Plan · 1\/3 done/);
  assert.match(html, /<li class="step done" title="done"><span class="step-icon">✓<\/span> Read the parser<\/li>/);
  assert.match(html, /<li class="step inProgress" title="in progress"><span class="step-icon">◐<\/span> Fix the bug<\/li>/);
});

test("a sub-agent's events are a collapsed block under its task call, titled by its description", () => {
  const running = played(8);
  let html = renderChat(running);
  assert.match(html, /<details class="subagent running" data-call="sub:t1"><summary><span class="sub-icon">↳<\/span> Sub-agent: <span class="sub-title">Find where tokens are parsed<\/span> <span class="tool-status">running…<\/span>/);
  const chat = played();
  const task = chat.items.find((i): i is ToolItem => i.type === "tool" && i.callId === "t1")!;
  assert.equal(task.sub?.state, "done");
  assert.deepEqual(task.sub?.items.map((i) => i.type), ["assistant", "tool"]);
  // The sub-agent numbers its calls on its own: its `p1` is not the run's plan call `p1`.
  const outer = chat.items.find((i): i is ToolItem => i.type === "tool" && i.callId === "p1")!;
  assert.equal(outer.name, "plan");
  assert.equal(outer.result?.content, "plan updated");
  html = renderChat(chat);
  const block = html.match(/<details class="subagent done" data-call="sub:t1">[\s\S]*?<\/details><\/div><\/details>/)?.[0];
  assert.ok(block, html);
  assert.doesNotMatch(block, /data-call="sub:t1" open/, "collapsed by default");
  assert.match(block, /Looking at the sources\./);
  assert.match(block, /<details class="tool ok" data-call="sub:t1\/p1">/, "its own key, apart from the run's p1");
  assert.match(block, /<span class="tool-name">grep<\/span> <span class="tool-arg">fn tokenize<\/span> <span class="tool-status">done<\/span>/);
  // The block comes right after the task call, and the call carries the sub-agent's answer.
  assert.ok(html.indexOf('data-call="t1"') < html.indexOf('data-call="sub:t1"'));
  assert.match(html, /Tokens are parsed in src\/lexer.rs/);
});

test("a sub-agent that fails says so in its block; its question opens it", () => {
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "toolCall", callId: "t1", name: "task", arguments: { description: "Edit <b>it</b>" } });
  chat.apply({ runId: "r1", kind: "subAgent", callId: "t1", event: { kind: "toolCall", callId: "c1", name: "edit_file", arguments: { path: "a.txt" } } });
  chat.ask({
    approvalId: "a1", runId: "r1", callId: "c1", tool: "edit_file", arguments: { path: "a.txt" }, argsHash: "h",
    reason: "writes files", options: ["allowOnce", "deny"],
  });
  let html = renderChat(chat);
  assert.match(html, /<details class="subagent running" data-call="sub:t1" open>/);
  assert.match(html, /Sub-agent: <span class="sub-title">Edit &lt;b&gt;it&lt;\/b&gt;<\/span>/);
  assert.match(html, /data-approval="a1" data-decision="allowOnce"/);
  assert.equal(chat.items.filter((i) => i.type === "tool").length, 1, "the question lands in the sub-agent's call");
  chat.apply({ runId: "r1", kind: "subAgent", callId: "t1", event: { kind: "error", message: "the model timed out" } });
  html = renderChat(chat);
  assert.match(html, /<details class="subagent error" data-call="sub:t1">/);
  assert.match(html, /<span class="tool-status">failed<\/span>/);
  assert.match(html, /the model timed out/);
  assert.doesNotMatch(html, /data-decision=/, "the question goes with the sub-agent's end");
  assert.equal(chat.running, true, "the sub-agent's end is not the run's");
});

test("a failed hook is a warning; a denial shows its reason", () => {
  const html = renderChat(played());
  assert.match(html, /<div class="hook denied"><span class="hook-icon">⛔<\/span> Hook <code>.\/check.sh<\/code> denied the call: src\/lexer.rs is frozen until the release<\/div>/);
  assert.match(html, /<div class="hook failed"><span class="hook-icon">⚠<\/span> Hook <code>.\/lint.sh<\/code> failed at the end of the turn: exit status 127: .\/lint.sh: not found<\/div>/);
  const chat = new Chat();
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "hook", stage: "postTool", command: "fmt <x>", callId: "c", outcome: "output", message: "formatted 2 files" });
  chat.apply({ runId: "r1", kind: "hook", stage: "preTool", command: "ok.sh", callId: "c", outcome: "allowed", message: "" });
  const more = renderChat(chat);
  assert.match(more, /Hook <code>fmt &lt;x&gt;<\/code> after the call:<pre class="hook-output">formatted 2 files<\/pre>/);
  assert.match(more, /<div class="hook allowed">.*Hook <code>ok.sh<\/code> allowed the call\.<\/div>/);
});

test("a compaction is one line with the token counts, the summary folded under it", () => {
  const html = renderChat(played());
  assert.match(html, /<details class="compacted" data-call="compacted:1"><summary>Older turns summarised \(12 turns\): 30,210 → 2,150 tokens<\/summary><div class="body"><p>The user asked to fix the <strong>parser<\/strong>; cairn read <code>src\/parser.rs<\/code>.<\/p>/);
  assert.doesNotMatch(html, /data-call="compacted:1" open/);
  assert.equal(thousands(1234567), "1,234,567");
  assert.equal(thousands(999), "999");
});

test("the new items survive a save and a reload of the chat", () => {
  const saved = JSON.parse(JSON.stringify(played().toJSON()));
  const again = Chat.from(saved);
  assert.equal(renderChat(again), renderChat(played()));
});
