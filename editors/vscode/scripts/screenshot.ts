// Renders the chat view's HTML (src/render.ts, the page the webview shows) for recorded run
// events (test/fixtures/recorded-run.json, recorded from the real `cairn lsp` by
// test/server.test.ts with CAIRN_RECORD_EVENTS) in headless Chromium, and saves a PNG.
// Usage: node dist/screenshot.js OUT.png [FIXTURE QUESTION]   (CHROMIUM, default /usr/bin/chromium)
// With a fixture (test/fixtures/chart-run.json, recorded with CAIRN_RECORD_CHART), that run and
// its question are shown instead, every tool block collapsed so the picture under it shows.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Chat } from "../src/chat";
import { RunEvent } from "../src/protocol";
import { page } from "../src/render";

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error("usage: node dist/screenshot.js OUT.png");
  const root = join(__dirname, "..");
  const fixture = process.argv[3];
  const question = process.argv[4] || "What does notes.txt say? Make it 43.";
  const events: RunEvent[] = JSON.parse(readFileSync(fixture || join(root, "test/fixtures/recorded-run.json"), "utf8"));
  const chat = new Chat();
  chat.addUser(question);
  chat.started(events[0].runId, "f7614cfa-1f5c-4f66-9fc1-7c28dfd9cb6a");
  for (const e of events) chat.apply(e);
  const html = page(chat, [{ sessionId: chat.sessionId!, title: question, runs: 1, updated: 0 }], {
    cspSource: "'none'",
    nonce: "screenshot",
    inlineStyle: readFileSync(join(root, "media/chat.css"), "utf8"),
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: 460, height: fixture ? 620 : 760 }, deviceScaleFactor: 1 });
    await tab.setContent(html);
    // Open the first tool block, as a user would, to show a result; the others stay collapsed.
    if (!fixture) await tab.evaluate(() => {
      const first = document.querySelector("details.tool");
      if (first) (first as HTMLDetailsElement).open = true;
    });
    await tab.screenshot({ path: out });
  } finally {
    await browser.close();
  }
  console.log(`wrote ${out}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
