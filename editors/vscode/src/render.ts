// The chat view's HTML: the conversation as Markdown with highlighted code, tool calls as
// collapsed blocks with their results, approval questions with buttons, edits with their review
// buttons, notices with what to do. Plain module: the extension and the screenshot script use it.

import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/common";
import { Chat, CompactedItem, HookItem, Item, NoticeAction, PlanItem, ToolItem } from "./chat";
import { Decision, PlanStep, SessionSummary } from "./protocol";

const md: MarkdownIt = new MarkdownIt({
  html: false, // the model's text never becomes markup
  linkify: true,
  highlight(code: string, lang: string): string {
    try {
      const body =
        lang && hljs.getLanguage(lang)
          ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value
          : hljs.highlightAuto(code).value;
      return `<pre class="hljs"><code>${body}</code></pre>`;
    } catch {
      return "";
    }
  },
});

export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function markdown(text: string): string {
  return md.render(text);
}

const DECISION_LABEL: Record<Decision, string> = {
  allowOnce: "Allow once",
  allowSession: "Allow for this session",
  deny: "Deny",
};

const ACTION_LABEL: Record<NoticeAction, string> = {
  restart: "Restart server",
  openSettings: "Open settings",
  install: "How to install",
  showLog: "Show log",
  retry: "Retry",
};

/** A one-line summary of a call's arguments (the path, command or query it is about). */
export function argSummary(args: unknown): string {
  if (args === undefined || args === null) return "";
  if (typeof args === "string") return args.length > 60 ? args.slice(0, 57) + "…" : args;
  if (typeof args !== "object") return String(args);
  const o = args as Record<string, unknown>;
  for (const k of ["path", "command", "query", "url", "pattern", "name"]) {
    if (typeof o[k] === "string") return String(o[k]);
  }
  const s = JSON.stringify(args);
  return s.length > 60 ? s.slice(0, 57) + "…" : s;
}

function toolStatus(t: ToolItem): { cls: string; label: string } {
  if (t.asking) return { cls: "asking", label: "waiting for your approval" };
  if (!t.result) return { cls: "running", label: "running…" };
  if (t.approval?.answer === "deny") return { cls: "error", label: "denied" };
  return t.result.isError ? { cls: "error", label: "failed" } : { cls: "ok", label: "done" };
}

/** The raster types a result's pictures may have; SVG is never shown (it can carry script). */
const PICTURE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A result's pictures, shown inline under the call (the page's CSP allows `data:` images). */
export function pictures(images: { mimeType: string; data: string }[] | undefined, tool: string): string {
  return (images ?? [])
    .filter((i) => PICTURE_TYPES.has(i.mimeType) && BASE64.test(i.data))
    .map(
      (i) =>
        `<img class="result-image" alt="A picture from ${escapeHtml(tool || "a tool")}" src="data:${i.mimeType};base64,${i.data}">`,
    )
    .join("");
}

/** `30210` as `30,210`. */
export function thousands(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const STEP_ICON: Record<PlanStep["state"], string> = { done: "✓", inProgress: "◐", pending: "○" };
const STEP_LABEL: Record<PlanStep["state"], string> = { done: "done", inProgress: "in progress", pending: "pending" };

/** The plan as a checklist; the latest `plan` event's list, updated in place. */
function renderPlan(p: PlanItem): string {
  const done = p.steps.filter((s) => s.state === "done").length;
  const steps = p.steps
    .map(
      (s) =>
        `<li class="step ${s.state}" title="${STEP_LABEL[s.state]}"><span class="step-icon">${STEP_ICON[s.state]}</span> ${escapeHtml(s.title)}</li>`,
    )
    .join("");
  return `<div class="plan"><div class="label">Plan · ${done}/${p.steps.length} done</div><ul class="plan-steps">${steps}</ul></div>`;
}

const STAGE_LABEL: Record<HookItem["stage"], string> = {
  preTool: "before the call",
  postTool: "after the call",
  turnEnd: "at the end of the turn",
};

/** A hook's outcome; a failed hook is a warning (never silent), a denial shows its reason. */
function renderHook(h: HookItem): string {
  const cmd = `<code>${escapeHtml(h.command)}</code>`;
  const when = STAGE_LABEL[h.stage];
  const msg = h.message.trim();
  switch (h.outcome) {
    case "failed":
      return `<div class="hook failed"><span class="hook-icon">⚠</span> Hook ${cmd} failed ${when}${msg ? `: ${escapeHtml(msg)}` : "."}</div>`;
    case "denied":
      return `<div class="hook denied"><span class="hook-icon">⛔</span> Hook ${cmd} denied the call${msg ? `: ${escapeHtml(msg)}` : "."}</div>`;
    case "asked":
      return `<div class="hook asked"><span class="hook-icon">?</span> Hook ${cmd} asks for your approval${msg ? `: ${escapeHtml(msg)}` : "."}</div>`;
    case "output":
      return `<div class="hook output"><span class="hook-icon">↪</span> Hook ${cmd} ${when}:${msg ? `<pre class="hook-output">${escapeHtml(msg)}</pre>` : " no output."}</div>`;
    case "allowed":
      return `<div class="hook allowed"><span class="hook-icon">✓</span> Hook ${cmd} allowed the call${msg ? `: ${escapeHtml(msg)}` : "."}</div>`;
  }
}

/** The one-line notice of a compaction, its summary collapsed under it. */
function renderCompacted(c: CompactedItem, key: string): string {
  const turns = c.turns === 1 ? "1 turn" : `${c.turns} turns`;
  return `<details class="compacted" data-call="${escapeHtml(key)}"><summary>Older turns summarised (${turns}): ${thousands(c.tokensBefore)} → ${thousands(c.tokensAfter)} tokens</summary><div class="body">${markdown(c.summary)}</div></details>`;
}

/** A sub-agent's block under its `task` call: collapsed unless it waits for an answer. */
function renderSub(t: ToolItem): string {
  const sub = t.sub!;
  const asking = sub.items.some((i) => i.type === "tool" && i.asking);
  const status = sub.state === "running" ? "running…" : sub.state === "error" ? "failed" : "done";
  const inner = sub.items.map((item, i) => renderItem(item, `sub:${t.callId}:${i}`, `sub:${t.callId}/`)).join("\n");
  const error = sub.error ? `<div class="notice error"><div class="text">${escapeHtml(sub.error)}</div></div>` : "";
  return `<details class="subagent ${sub.state}" data-call="sub:${escapeHtml(t.callId)}"${asking ? " open" : ""}><summary><span class="sub-icon">↳</span> Sub-agent: <span class="sub-title">${escapeHtml(sub.description)}</span> <span class="tool-status">${status}</span></summary><div class="sub-body">${inner || `<div class="empty">Nothing yet.</div>`}${error}</div></details>`;
}

/** A tool call; `scope` prefixes its block's key (a sub-agent numbers its calls on its own). */
function renderTool(t: ToolItem, scope = ""): string {
  const status = toolStatus(t);
  const args = JSON.stringify(t.arguments ?? {}, null, 2);
  const open = t.asking ? " open" : "";
  let body = `<div class="label">Arguments</div><pre class="args">${escapeHtml(args)}</pre>`;
  if (t.approval) {
    const answer = t.approval.answer ? `: ${DECISION_LABEL[t.approval.answer].toLowerCase()}` : "";
    body += `<div class="approval-note">Approval ${escapeHtml(t.approval.state)}${escapeHtml(answer)}. ${escapeHtml(t.approval.reason)}</div>`;
  }
  if (t.result) {
    body += `<div class="label">${t.result.isError ? "Error" : "Result"}</div><pre class="result${t.result.isError ? " is-error" : ""}">${escapeHtml(t.result.content)}</pre>`;
  }
  let html = `<details class="tool ${status.cls}" data-call="${escapeHtml(scope + t.callId)}"${open}><summary><span class="tool-icon">⚙</span> <span class="tool-name">${escapeHtml(t.name || "tool")}</span> <span class="tool-arg">${escapeHtml(argSummary(t.arguments))}</span> <span class="tool-status">${status.label}</span></summary>${body}</details>`;
  html += pictures(t.result?.images, t.name);
  if (t.asking) {
    const paths = t.asking.protectedPaths?.length
      ? `<div class="protected">Protected: ${t.asking.protectedPaths.map((p) => `<code>${escapeHtml(p)}</code>`).join(", ")}</div>`
      : "";
    const buttons = t.asking.options
      .map(
        (d) =>
          `<button class="${d === "deny" ? "secondary" : "primary"}" data-action="approve" data-approval="${escapeHtml(t.asking!.approvalId)}" data-decision="${d}">${DECISION_LABEL[d]}</button>`,
      )
      .join("");
    html += `<div class="approval" data-approval="${escapeHtml(t.asking.approvalId)}"><div class="question">cairn asks: allow <code>${escapeHtml(t.name)}</code>? ${escapeHtml(t.asking.reason)}</div>${paths}<div class="buttons">${buttons}</div></div>`;
  }
  for (const e of t.edits) {
    const file = escapeHtml(decodeURIComponent(e.uri.replace(/^file:\/\//, "")));
    if (!e.applied) {
      html += `<div class="edit rejected">Edit of <code>${file}</code> not applied: ${escapeHtml(e.reason ?? "")}</div>`;
    } else if (e.review === "pending") {
      html += `<div class="edit pending">Edited <code>${file}</code> <button class="secondary" data-action="diff" data-uri="${escapeHtml(e.uri)}">Show diff</button><button class="primary" data-action="accept" data-uri="${escapeHtml(e.uri)}">Accept</button><button class="secondary" data-action="reject" data-uri="${escapeHtml(e.uri)}">Reject</button></div>`;
    } else {
      html += `<div class="edit ${e.review ?? ""}">Edited <code>${file}</code>${e.review ? ` (${e.review})` : ""}</div>`;
    }
  }
  if (t.sub) html += renderSub(t);
  return html;
}

function renderItem(item: Item, key: string, scope = ""): string {
  switch (item.type) {
    case "plan":
      return renderPlan(item);
    case "hook":
      return renderHook(item);
    case "compacted":
      return renderCompacted(item, `compacted:${key}`);
    case "user":
      return `<div class="msg user"><div class="role">You</div><div class="body">${markdown(item.text)}</div></div>`;
    case "assistant":
      return `<div class="msg assistant"><div class="role">cairn</div><div class="body">${markdown(item.text)}</div></div>`;
    case "tool":
      return renderTool(item, scope);
    case "notice": {
      const buttons = (item.actions ?? [])
        .map((a) => `<button class="secondary" data-action="${a}">${ACTION_LABEL[a]}</button>`)
        .join("");
      return `<div class="notice ${item.level}"><div class="text">${markdown(item.text)}</div>${buttons ? `<div class="buttons">${buttons}</div>` : ""}</div>`;
    }
  }
}

/** The conversation's HTML (the inside of `#log`). */
export function renderChat(chat: Chat): string {
  if (chat.items.length === 0) {
    return `<div class="empty">Ask cairn anything about this workspace. Use <b>Agent</b> to let it edit files; each write asks for your approval here.</div>`;
  }
  const parts = chat.items.map((item, i) => renderItem(item, String(i)));
  if (chat.running) parts.push(`<div class="working">cairn is working…</div>`);
  return parts.join("\n");
}

export function renderSessions(sessions: SessionSummary[], current?: string): string {
  const options = sessions
    .map(
      (s) =>
        `<option value="${escapeHtml(s.sessionId)}"${s.sessionId === current ? " selected" : ""}>${escapeHtml(s.title || s.sessionId)}</option>`,
    )
    .join("");
  return `<option value="">Sessions…</option>${options}`;
}

export interface PageOptions {
  cspSource: string;
  nonce: string;
  scriptUri?: string;
  styleUri?: string;
  /** The CSS itself, inlined (for the screenshot, which has no webview resource root). */
  inlineStyle?: string;
}

/** The whole webview page; `body` is the first rendering of the conversation. */
export function page(chat: Chat, sessions: SessionSummary[], o: PageOptions): string {
  const csp = [
    "default-src 'none'",
    `style-src ${o.cspSource}${o.inlineStyle ? ` 'nonce-${o.nonce}'` : ""}`,
    `script-src 'nonce-${o.nonce}'`,
    `img-src ${o.cspSource} data:`,
  ].join("; ");
  const style = o.inlineStyle
    ? `<style nonce="${o.nonce}">${o.inlineStyle}</style>`
    : `<link rel="stylesheet" href="${o.styleUri}">`;
  const script = o.scriptUri ? `<script nonce="${o.nonce}" src="${o.scriptUri}"></script>` : "";
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${style}<title>cairn</title></head>
<body>
<header><select id="sessions" title="Open a stored session">${renderSessions(sessions, chat.sessionId)}</select><button class="secondary" data-action="newChat" title="Start a new chat">New chat</button></header>
<main id="log">${renderChat(chat)}</main>
<footer>
<textarea id="input" rows="3" placeholder="Ask cairn… (Enter to send, Shift+Enter for a new line)"></textarea>
<div class="controls"><label><input type="checkbox" id="agent"> Agent (may edit files)</label>
<span class="spacer"></span>
<button class="secondary" id="stop" data-action="stop"${chat.running ? "" : " disabled"}>Stop</button>
<button class="primary" id="send" data-action="send"${chat.running ? " disabled" : ""}>Send</button></div>
</footer>
${script}
</body></html>`;
}
