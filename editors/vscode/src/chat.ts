// The chat view's state: the conversation so far, built from the user's messages and the run
// events (`cairn/runEvent`), with the approvals waiting in it. Plain module: no vscode API, so the
// node tests drive it with recorded events. The state is plain JSON, saved after every change so
// a crash of the server or a reload never loses the chat.

import { ApproveParams, Decision, RunEvent } from "./protocol";

export interface ToolItem {
  type: "tool";
  callId: string;
  name: string;
  arguments: unknown;
  result?: { isError: boolean; content: string; images?: { mimeType: string; data: string }[] };
  /** The question, while the view waits for the user's answer. */
  asking?: { approvalId: string; reason: string; options: Decision[]; protectedPaths?: string[] };
  /** What was decided (from the `approval` events). */
  approval?: { state: "asked" | "answered"; answer?: Decision; reason: string };
  edits: { uri: string; applied: boolean; reason?: string; review?: "pending" | "accepted" | "rejected" }[];
}

export type Item =
  | { type: "user"; text: string }
  | { type: "assistant"; text: string }
  | ToolItem
  | { type: "notice"; level: "info" | "warning" | "error"; text: string; actions?: NoticeAction[] };

/** Buttons a notice offers; the view posts them back and the extension runs them. */
export type NoticeAction = "restart" | "openSettings" | "install" | "showLog" | "retry";

export interface ChatData {
  sessionId?: string;
  items: Item[];
}

export class Chat {
  sessionId?: string;
  items: Item[] = [];
  /** The run this view is showing, while it runs. */
  runId?: string;
  /** The message and mode of the last turn, for a retry after an error. */
  lastMessage?: string;
  lastMode: "chat" | "agent" = "chat";
  private readonly tools = new Map<string, ToolItem>();
  /** Between sending `cairn/chat` and its answer: events and questions of a run not known yet. */
  private awaiting = false;
  private early: RunEvent[] = [];
  private earlyQuestions: ApproveParams[] = [];

  static from(data: ChatData | undefined): Chat {
    const chat = new Chat();
    if (data) {
      chat.sessionId = data.sessionId;
      chat.items = data.items.map((i) => (i.type === "tool" ? { ...i, asking: undefined } : i));
    }
    return chat;
  }

  toJSON(): ChatData {
    return { sessionId: this.sessionId, items: this.items };
  }

  get running(): boolean {
    return this.runId !== undefined;
  }

  addUser(text: string, mode: "chat" | "agent" = "chat"): void {
    this.items.push({ type: "user", text });
    this.lastMessage = text;
    this.lastMode = mode;
    this.awaiting = true;
  }

  /** `cairn/chat` answered: the run's events that came before the answer are applied now. */
  started(runId: string, sessionId: string): void {
    this.runId = runId;
    this.sessionId = sessionId;
    this.tools.clear();
    this.awaiting = false;
    const early = this.early.filter((e) => e.runId === runId);
    const questions = this.earlyQuestions.filter((q) => q.runId === runId);
    this.early = [];
    this.earlyQuestions = [];
    for (const e of early) this.apply(e);
    for (const q of questions) this.ask(q);
  }

  /** `cairn/chat` failed: nothing will start. */
  notStarted(): void {
    this.awaiting = false;
    this.early = [];
    this.earlyQuestions = [];
  }

  notice(level: "info" | "warning" | "error", text: string, actions?: NoticeAction[]): void {
    this.items.push({ type: "notice", level, text, actions });
  }

  /** Applies one run event; false when it belongs to another run. */
  apply(e: RunEvent): boolean {
    if (e.runId !== this.runId) {
      if (this.awaiting && this.early.length < 10000) this.early.push(e);
      return false;
    }
    switch (e.kind) {
      case "text": {
        const last = this.items[this.items.length - 1];
        if (last && last.type === "assistant") last.text += e.delta;
        else this.items.push({ type: "assistant", text: e.delta });
        break;
      }
      case "toolCall":
        this.tool(e.callId, e.name).arguments = e.arguments;
        break;
      case "approval": {
        const t = this.tool(e.callId, e.name);
        t.approval = { state: e.state, answer: e.answer, reason: e.reason };
        if (e.state === "answered") t.asking = undefined;
        break;
      }
      case "toolResult": {
        const t = this.tool(e.callId, "");
        t.result = { isError: e.isError, content: e.content, images: e.images };
        t.asking = undefined;
        break;
      }
      case "edit":
        this.tool(e.callId, "edit_file").edits.push({
          uri: e.uri,
          applied: e.applied,
          reason: e.reason,
          review: e.applied ? "pending" : undefined,
        });
        break;
      case "done":
        this.finish();
        if (e.stopped === "cancelled") {
          this.notice("info", "Stopped. The answer so far is kept; send a message to go on.");
        } else if (e.stopped === "toolBudget") {
          this.notice(
            "warning",
            `Stopped after ${e.toolCalls} tool calls (the budget, setting cairn.agent.max_tool_calls). Ask again to continue.`,
          );
        } else if (e.stopped === "refused") {
          this.notice("warning", "The model refused to answer this request.");
        }
        break;
      case "error":
        this.finish();
        this.notice("error", describeRunError(e.message), ["retry", "openSettings"]);
        break;
    }
    return true;
  }

  /** Shows an approval question in the view (from `cairn/approve`). */
  ask(p: ApproveParams): boolean {
    if (p.runId !== this.runId) {
      if (!this.awaiting) return false;
      this.earlyQuestions.push(p);
      return true;
    }
    const t = this.tool(p.callId, p.tool);
    if (t.arguments === undefined) t.arguments = p.arguments;
    t.asking = { approvalId: p.approvalId, reason: p.reason, options: p.options, protectedPaths: p.protectedPaths };
    return true;
  }

  /** The server went away in the middle of a run: the run is over, the chat stays. */
  serverStopped(text: string, actions: NoticeAction[]): void {
    if (this.running) this.finish();
    this.notice("error", text, actions);
  }

  setReview(uri: string, review: "accepted" | "rejected"): void {
    for (const item of this.items) {
      if (item.type !== "tool") continue;
      for (const edit of item.edits) if (edit.uri === uri && edit.review === "pending") edit.review = review;
    }
  }

  private finish(): void {
    this.runId = undefined;
    for (const item of this.items) if (item.type === "tool") item.asking = undefined;
  }

  private tool(callId: string, name: string): ToolItem {
    let t = this.tools.get(callId);
    if (!t) {
      t = { type: "tool", callId, name, arguments: undefined, edits: [] };
      this.tools.set(callId, t);
      this.items.push(t);
    } else if (!t.name && name) {
      t.name = name;
    }
    return t;
  }
}

/** A run's `error` message, with what to do about it. */
export function describeRunError(message: string): string {
  const hint = /API[_ ]KEY|authentication|401|403/i.test(message)
    ? "Set the provider's API key (the variable named above), or choose another provider in the setting cairn.provider.kind, then retry."
    : /connect|refused|unreachable|timed out|dns|resolve/i.test(message)
      ? "Check that the model server is running and the setting cairn.provider.base_url, then retry."
      : "Check the provider settings (cairn.provider.*), then retry.";
  return `The run failed: ${message}\n${hint} The chat so far is kept.`;
}

/** Rebuilds a chat from a stored session transcript (`cairn/sessions` with a sessionId). */
export function fromTranscript(
  sessionId: string,
  records: import("./protocol").SessionRecord[],
): Chat {
  const chat = new Chat();
  chat.sessionId = sessionId;
  const tools = new Map<string, ToolItem>();
  for (const r of records) {
    if (r.type === "end" && r.outcome && r.outcome !== "done") {
      chat.notice("info", `This turn ended: ${r.outcome}.`);
    }
    const m = r.message;
    if (r.type !== "message" || !m) continue;
    if (m.role === "user") chat.items.push({ type: "user", text: m.text ?? "" });
    if (m.role === "assistant") {
      if (m.text) chat.items.push({ type: "assistant", text: m.text });
      for (const call of m.toolCalls ?? []) {
        let args: unknown = call.arguments;
        try {
          args = JSON.parse(call.arguments);
        } catch {
          // Shown as the raw text the model sent.
        }
        const t: ToolItem = { type: "tool", callId: call.id, name: call.name, arguments: args, edits: [] };
        tools.set(call.id, t);
        chat.items.push(t);
      }
    }
    if (m.role === "tool" && m.callId) {
      const t = tools.get(m.callId);
      if (t) t.result = { isError: m.isError ?? false, content: m.content ?? "" };
    }
  }
  return chat;
}
