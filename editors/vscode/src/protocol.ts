// The `cairn/*` protocol (docs/lsp-extensions.md), as TypeScript types. Plain module: no vscode.

export type Decision = "allowOnce" | "allowSession" | "deny";

export interface ChatParams {
  message: string;
  sessionId?: string;
  mode?: "chat" | "agent";
  context?: { uri: string; range?: Range };
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

interface EventBase {
  runId: string;
}
export type RunEvent = EventBase &
  (
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
    | { kind: "toolResult"; callId: string; isError: boolean; content: string }
    | { kind: "edit"; callId: string; uri: string; applied: boolean; reason?: string }
    | {
        kind: "done";
        usage: { inputTokens: number; outputTokens: number };
        toolCalls: number;
        stopped?: "toolBudget" | "cancelled";
      }
    | { kind: "error"; message: string }
  );

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
  type: "run" | "message" | "end";
  runId: string;
  mode?: string;
  message?: {
    role: "user" | "assistant" | "tool";
    text?: string;
    toolCalls?: { id: string; name: string; arguments: string }[];
    callId?: string;
    name?: string;
    content?: string;
    isError?: boolean;
  };
  outcome?: string;
}

export interface ToolInfo {
  name: string;
  description: string;
  category: string;
  effect: string;
  agentOnly: boolean;
  policy: "allow" | "ask" | "deny";
  selected: boolean;
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

export const Methods = {
  chat: "cairn/chat",
  cancel: "cairn/cancel",
  sessions: "cairn/sessions",
  tools: "cairn/tools",
  runEvent: "cairn/runEvent",
  approve: "cairn/approve",
  mcpStatus: "cairn/mcpStatus",
} as const;
