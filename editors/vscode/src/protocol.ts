// The `cairn/*` protocol (docs/lsp-extensions.md), as TypeScript types. Plain module: no vscode.
// Kept in step with server/cairn-lsp/src/protocol.rs by a test (`cargo test -p cairn-lsp --test
// protocol_ts`): every method, and the field names of every interface named there.

export type Decision = "allowOnce" | "allowSession" | "deny";

export interface ChatParams {
  message: string;
  sessionId?: string;
  mode?: "chat" | "agent";
  context?: ChatContext;
  attachments?: ResourceRef[];
}

export interface ChatContext {
  uri: string;
  range?: Range;
}

/** One MCP resource, by server and URI. */
export interface ResourceRef {
  server: string;
  uri: string;
}

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export interface ChatResult {
  runId: string;
  sessionId: string;
}

export interface CancelParams {
  runId: string;
}
export interface CancelResult {
  cancelled: boolean;
}

export interface SessionsParams {
  sessionId?: string;
}
/** `cairn/sessions` without `sessionId`. */
export interface SessionList {
  sessions: SessionSummary[];
}
/** `cairn/sessions` with `sessionId`. */
export interface SessionTranscript {
  sessionId: string;
  records: SessionRecord[];
}

export interface ToolsParams {
  sessionId?: string;
}
export interface ToolsResult {
  tools: ToolInfo[];
}

interface EventBase {
  runId: string;
}
/** One `cairn/runEvent`: the run id and one event, flattened. */
export type RunEvent = EventBase & EventBody;

/** One step of a plan; every `plan` event carries the whole current list. */
export interface PlanStep {
  title: string;
  state: "pending" | "inProgress" | "done";
}

export type HookStage = "preTool" | "postTool" | "turnEnd";
export type HookOutcome = "allowed" | "denied" | "asked" | "output" | "failed";

/** A run event without its run id: the events of a run, and those a sub-agent's run nests. */
export type EventBody =
  | { kind: "text"; delta: string }
  | { kind: "toolCall"; callId: string; name: string; arguments: unknown }
  | {
      kind: "approval";
      callId: string;
      name: string;
      state: "asked" | "answered";
      answer?: Decision;
      reason: string;
    }
  | {
      kind: "toolResult";
      callId: string;
      isError: boolean;
      content: string;
      images?: { mimeType: string; data: string }[];
    }
  | { kind: "edit"; callId: string; uri: string; applied: boolean; reason?: string }
  | {
      kind: "done";
      usage: { inputTokens: number; outputTokens: number };
      toolCalls: number;
      stopped?: "toolBudget" | "cancelled" | "refused";
    }
  | { kind: "error"; message: string }
  | { kind: "plan"; callId: string; steps: PlanStep[] }
  | { kind: "subAgent"; callId: string; event: EventBody }
  | {
      kind: "hook";
      stage: HookStage;
      command: string;
      callId?: string;
      outcome: HookOutcome;
      message: string;
    }
  | { kind: "compacted"; turns: number; tokensBefore: number; tokensAfter: number; summary: string };


export interface ApproveParams {
  approvalId: string;
  runId: string;
  callId: string;
  tool: string;
  arguments: unknown;
  argsHash: string;
  reason: string;
  description?: string;
  options: Decision[];
  protectedPaths?: string[];
}

export interface ApproveResult {
  approvalId: string;
  runId: string;
  callId: string;
  decision: Decision;
}

export interface SessionSummary {
  sessionId: string;
  title: string;
  runs: number;
  updated: number;
}

export interface SessionRecord {
  type: "run" | "message" | "compaction" | "end";
  runId: string;
  mode?: string;
  started?: number;
  message?: {
    role: "user" | "assistant" | "tool";
    text?: string;
    toolCalls?: { id: string; name: string; arguments: string }[];
    callId?: string;
    name?: string;
    content?: string;
    isError?: boolean;
  };
  usage?: { inputTokens: number; outputTokens: number };
  toolCalls?: number;
  outcome?: string;
  /** `compaction`: the messages the summary stands for, and the summary. */
  drop?: number;
  summary?: string;
  turns?: number;
  tokensBefore?: number;
  tokensAfter?: number;
}

export interface ToolInfo {
  name: string;
  description: string;
  category: string;
  effect: string;
  agentOnly: boolean;
  policy: "allow" | "ask" | "deny";
  selected: boolean;
  inputSchema: unknown;
}

export interface McpResource {
  server: string;
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
  template: boolean;
}
export interface McpResourcesResult {
  resources: McpResource[];
}

export interface McpPrompt {
  server: string;
  name: string;
  description?: string;
  arguments: { name: string; description?: string; required?: boolean }[];
}
export interface McpPromptsResult {
  prompts: McpPrompt[];
}

export interface ElicitParams {
  server: string;
  message: string;
  requestedSchema: unknown;
}
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: unknown;
}

export interface McpServerState {
  name: string;
  transport: string;
  state: "starting" | "running" | "restarting" | "failed" | "disabled";
  tools?: number;
  attempt?: number;
  reason?: string;
}

export interface McpStatus {
  servers: McpServerState[];
  waitingForTrust?: string[];
  problems?: { server: string; message: string }[];
  reviews?: { server: string; tool: string; publicName: string; reason: unknown }[];
}

/** One LSP diagnostic, as `cairn/diagnostics` carries it (severity 1 error, 2 warning, 3 info, 4 hint). */
export interface Diagnostic {
  range: Range;
  severity?: 1 | 2 | 3 | 4;
  message: string;
  source?: string;
  code?: string | number;
}
/** `cairn/diagnostics`, client to server: the file's whole current list (empty clears it). */
export interface DiagnosticsParams {
  uri: string;
  diagnostics: Diagnostic[];
}

export interface CheckpointsParams {
  sessionId: string;
}
export interface CheckpointTurn {
  turn: number;
  runId: string;
  message: string;
  files: string[];
}
export interface CheckpointsResult {
  turns: CheckpointTurn[];
}

export interface RewindParams {
  sessionId: string;
  turn: number;
}
export interface RewindProblem {
  path: string;
  reason: string;
}
export interface RewindResult {
  restored: string[];
  conflicts: RewindProblem[];
  failed: RewindProblem[];
}

export interface CompactParams {
  sessionId: string;
}
export interface CompactResult {
  compacted: boolean;
  turns?: number;
  tokensBefore?: number;
  tokensAfter?: number;
  reason?: string;
}

export interface ContextParams {
  uri?: string;
}
export interface ContextRule {
  path: string;
  bytes: number;
  included: number;
  truncated: boolean;
}
export interface ContextResult {
  rules: ContextRule[];
  maxBytes: number;
}

export const Methods = {
  chat: "cairn/chat",
  cancel: "cairn/cancel",
  sessions: "cairn/sessions",
  tools: "cairn/tools",
  runEvent: "cairn/runEvent",
  approve: "cairn/approve",
  mcpStatus: "cairn/mcpStatus",
  mcpResources: "cairn/mcpResources",
  mcpPrompts: "cairn/mcpPrompts",
  elicit: "cairn/elicit",
  diagnostics: "cairn/diagnostics",
  checkpoints: "cairn/checkpoints",
  rewind: "cairn/rewind",
  compact: "cairn/compact",
  context: "cairn/context",
} as const;

