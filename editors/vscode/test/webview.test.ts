// The chat view's page (src/render.ts's HTML with media/chat.js, under its Content Security
// Policy) in headless Chromium: the user's clicks and keys reach the extension as messages, and
// the extension's renders update the view. Needs Chromium ($CHROMIUM, default /usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Chat } from "../src/chat";
import { page, renderChat } from "../src/render";

const root = join(__dirname, "../..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}`;
if (skip) process.stderr.write(`webview.test: skipped: ${skip} (apt-get install chromium, or set CHROMIUM)\n`);

test("approving, sending, stopping and rendering in the chat view", { skip, timeout: 60000 }, async () => {
  const chat = new Chat();
  chat.addUser("Make it 43");
  chat.started("r1", "s1");
  chat.apply({ runId: "r1", kind: "toolCall", callId: "c1", name: "edit_file", arguments: { path: "notes.txt" } });
  chat.ask({
    approvalId: "a1", runId: "r1", callId: "c1", tool: "edit_file", arguments: { path: "notes.txt" }, argsHash: "h",
    reason: "`edit_file` writes files", options: ["allowOnce", "allowSession", "deny"],
  });
  const html = page(chat, [{ sessionId: "s0", title: "An older chat", runs: 2, updated: 0 }], {
    cspSource: "http://cairn.test",
    nonce: "n0nce",
    scriptUri: "http://cairn.test/chat.js",
    styleUri: "http://cairn.test/chat.css",
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const tab = await browser.newPage();
    await tab.route("http://cairn.test/**", (route) => {
      const file = route.request().url().endsWith(".js") ? "chat.js" : route.request().url().endsWith(".css") ? "chat.css" : undefined;
      if (!file) return route.fulfill({ contentType: "text/html", body: html });
      return route.fulfill({ contentType: file.endsWith(".js") ? "text/javascript" : "text/css", body: readFileSync(join(root, "media", file), "utf8") });
    });
    await tab.addInitScript(() => {
      const w = window as unknown as { posted: unknown[]; acquireVsCodeApi: () => unknown };
      w.posted = [];
      let state: unknown;
      w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.posted.push(m), getState: () => state, setState: (s: unknown) => (state = s) });
    });
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    tab.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await tab.goto("http://cairn.test/");
    // What the page posted since the last look, as the extension receives it (JSON: no undefined).
    const posted = async () =>
      JSON.parse(await tab.evaluate(() => JSON.stringify((window as unknown as { posted: unknown[] }).posted.splice(0))));
    await tab.waitForFunction(() => (window as unknown as { posted: unknown[] }).posted.length > 0);
    assert.deepEqual((await posted())[0], { type: "ready" });

    // The question, under its call, with three buttons; a click answers it once.
    assert.equal(await tab.locator(".approval button").count(), 3);
    await tab.getByRole("button", { name: "Allow once" }).click();
    assert.deepEqual(await posted(), [{ type: "approve", approvalId: "a1", decision: "allowOnce" }]);
    assert.equal(await tab.locator(".approval button:disabled").count(), 3, "answered once: the buttons are disabled");

    // While the run goes on, Send is disabled and Stop is not.
    assert.equal(await tab.locator("#send").isDisabled(), true);
    await tab.locator("#stop").click();
    assert.deepEqual(await posted(), [{ type: "stop" }]);

    // The extension's next render replaces the log and enables Send.
    chat.apply({ runId: "r1", kind: "toolResult", callId: "c1", isError: false, content: "edited notes.txt" });
    chat.apply({ runId: "r1", kind: "text", delta: "Done: **43**." });
    chat.apply({ runId: "r1", kind: "done", usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: 1 });
    await tab.evaluate((m) => window.postMessage(m, "*"), { type: "render", html: renderChat(chat), running: false });
    await tab.waitForFunction(() => document.querySelector("#log")?.textContent?.includes("Done: 43."));
    assert.equal(await tab.locator("#send").isDisabled(), false);
    assert.equal(await tab.locator(".approval").count(), 0);

    // Enter sends (Shift+Enter is a new line), in agent mode when the box is ticked.
    await tab.locator("#agent").check();
    await tab.locator("#input").fill("next question");
    await tab.locator("#input").press("Enter");
    assert.deepEqual(await posted(), [{ type: "send", text: "next question", mode: "agent" }]);
    assert.equal(await tab.locator("#input").inputValue(), "");

    // A stored session is opened from the list.
    await tab.locator("#sessions").selectOption("s0");
    assert.deepEqual(await posted(), [{ type: "openSession", sessionId: "s0" }]);
    assert.deepEqual(errors, [], "no script errors and no CSP violations");
  } finally {
    await browser.close();
  }
});
