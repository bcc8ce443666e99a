// The chat view's state: the conversation so far, built from the user's messages and the run
// events (`cairn/runEvent`), with the approvals waiting in it. Plain module: no vscode API, so the
// node tests drive it with recorded events. The state is plain JSON, saved after every change so
// a crash of the server or a reload never loses the chat.

import { ApproveParams, Decision, EventBody, HookOutcome, HookStage, PlanStep, RunEvent } from "./protocol";

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
  /** The sub-agent a `task` call started: its own events, shown under the call. */
  sub?: SubAgent;
}

/** A sub-agent's run, nested under the `task` call that started it. */
export interface SubAgent {
  /** The call's `arguments.description`. */
  description: string;
  items: Item[];
  state: "running" | "done" | "error";
  error?: string;
}

export interface PlanItem {
  type: "plan";
  steps: PlanStep[];
}

export interface HookItem {
  type: "hook";
  stage: HookStage;
  command: string;
  callId?: string;
  outcome: HookOutcome;
  message: string;
}

export interface CompactedItem {
  type: "compacted";
  turns: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
}

export type Item =
  | { type: "user"; text: string }
  | { type: "assistant"; text: string }
  | ToolItem
  | PlanItem
  | HookItem
  | CompactedItem
  | { type: "notice"; level: "info" | "warning" | "error"; text: string; actions?: NoticeAction[] };

/** Buttons a notice offers; the view posts them back and the extension runs them. */
export type NoticeAction = "restart" | "openSettings" | "install" | "showLog" | "retry";

/** Where a run's events land: the chat itself, or a sub-agent's block (its call ids are its own). */
interface Scope {
  items: Item[];
  tools: Map<string, ToolItem>;
  /** The plan of this run so far: a new `plan` event replaces its steps in place. */
  plan?: PlanItem;
  /** The sub-agents of this run's `task` calls, by call id. */
  subs: Map<string, Scope>;
}

function newScope(items: Item[]): Scope {
  return { items, tools: new Map(), subs: new Map() };
}

/** Every tool item in `items`, the sub-agents' too. */
function* allTools(items: Item[]): Generator<ToolItem> {
  for (const item of items) {
    if (item.type !== "tool") continue;
    yield item;
    if (item.sub) yield* allTools(item.sub.items);
  }
}

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
  /** The running run's events land here (reset when a run starts). */
  private scope: Scope = newScope(this.items);
  /** Between sending `cairn/chat` and its answer: events and questions of a run not known yet. */
  private awaiting = false;
  private early: RunEvent[] = [];
  private earlyQuestions: ApproveParams[] = [];

  static from(data: ChatData | undefined): Chat {
    const chat = new Chat();
    if (data) {
      chat.sessionId = data.sessionId;
      chat.items = data.items;
      for (const t of allTools(chat.items)) t.asking = undefined;
    }
    chat.scope = newScope(chat.items);
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
    this.scope = newScope(this.items);
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
      default:
        applyTo(this.scope, e);
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
    const t = toolFor(this.askScope(p.callId), p.callId, p.tool);
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
    for (const t of allTools(this.items)) {
      for (const edit of t.edits) if (edit.uri === uri && edit.review === "pending") edit.review = review;
    }
  }

  private finish(): void {
    this.runId = undefined;
    for (const t of allTools(this.items)) t.asking = undefined;
    for (const t of this.scope.tools.values()) if (t.sub?.state === "running") t.sub.state = "done";
  }

  /** The scope whose call `callId` is being asked about: a running sub-agent's, if it has
   * that call without a result (sub-agents number their calls on their own), else the run's. */
  private askScope(callId: string): Scope {
    const find = (scope: Scope): Scope | undefined => {
      for (const sub of scope.subs.values()) {
        const inner = find(sub);
        if (inner) return inner;
        const t = sub.tools.get(callId);
        if (t && !t.result) return sub;
      }
      return undefined;
    };
    return find(this.scope) ?? this.scope;
  }
}

/** The tool item of `callId` in `scope`, made when it is new. */
function toolFor(scope: Scope, callId: string, name: string): ToolItem {
  let t = scope.tools.get(callId);
  if (!t) {
    t = { type: "tool", callId, name, arguments: undefined, edits: [] };
    scope.tools.set(callId, t);
    scope.items.push(t);
  } else if (!t.name && name) {
    t.name = name;
  }
  return t;
}

/** Applies one event (other than the run's own `done` and `error`) to a scope. */
function applyTo(scope: Scope, e: EventBody): void {
  switch (e.kind) {
    case "text": {
      const last = scope.items[scope.items.length - 1];
      if (last && last.type === "assistant") last.text += e.delta;
      else scope.items.push({ type: "assistant", text: e.delta });
      break;
    }
    case "toolCall":
      toolFor(scope, e.callId, e.name).arguments = e.arguments;
      break;
    case "approval": {
      const t = toolFor(scope, e.callId, e.name);
      t.approval = { state: e.state, answer: e.answer, reason: e.reason };
      if (e.state === "answered") t.asking = undefined;
      break;
    }
    case "toolResult": {
      const t = toolFor(scope, e.callId, "");
      t.result = { isError: e.isError, content: e.content, images: e.images };
      t.asking = undefined;
      // The task call's result is the sub-agent's answer: its run is over.
      if (t.sub?.state === "running") t.sub.state = "done";
      break;
    }
    case "edit":
      toolFor(scope, e.callId, "edit_file").edits.push({
        uri: e.uri,
        applied: e.applied,
        reason: e.reason,
        review: e.applied ? "pending" : undefined,
      });
      break;
    case "plan":
      if (scope.plan) scope.plan.steps = e.steps;
      else {
        scope.plan = { type: "plan", steps: e.steps };
        scope.items.push(scope.plan);
      }
      break;
    case "subAgent": {
      const t = toolFor(scope, e.callId, "task");
      let sub = scope.subs.get(e.callId);
      if (!sub || !t.sub) {
        t.sub = { description: taskDescription(t.arguments), items: [], state: "running" };
        sub = newScope(t.sub.items);
        scope.subs.set(e.callId, sub);
      }
      const inner = e.event;
      if (inner.kind === "done") {
        t.sub.state = "done";
        for (const it of allTools(t.sub.items)) it.asking = undefined;
      } else if (inner.kind === "error") {
        t.sub.state = "error";
        t.sub.error = inner.message;
        for (const it of allTools(t.sub.items)) it.asking = undefined;
      } else {
        applyTo(sub, inner);
      }
      break;
    }
    case "hook":
      scope.items.push({
        type: "hook",
        stage: e.stage,
        command: e.command,
        callId: e.callId,
        outcome: e.outcome,
        message: e.message,
      });
      break;
    case "compacted":
      scope.items.push({
        type: "compacted",
        turns: e.turns,
        tokensBefore: e.tokensBefore,
        tokensAfter: e.tokensAfter,
        summary: e.summary,
      });
      break;
    case "done":
    case "error":
      // The run's own ending is the chat's business (see `Chat.apply`).
      break;
  }
}

/** A `task` call's title: its `description` argument. */
export function taskDescription(args: unknown): string {
  const d = args && typeof args === "object" ? (args as Record<string, unknown>).description : undefined;
  return typeof d === "string" && d.trim() ? d.trim() : "sub-agent";
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
