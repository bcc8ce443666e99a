// The cairn protocol client: typed `cairn/*` requests and the notifications and requests the
// server sends, over any JSON-RPC connection (vscode-languageclient's LanguageClient in the
// extension, a vscode-jsonrpc MessageConnection in the tests). No vscode API here.

import {
  ApproveParams,
  ApproveResult,
  ChatParams,
  ChatResult,
  CheckpointTurn,
  CompactResult,
  ContextParams,
  ContextResult,
  DiagnosticsParams,
  McpStatus,
  Methods,
  RewindResult,
  RunEvent,
  SessionRecord,
  SessionSummary,
  ToolInfo,
} from "./protocol";

/** The part of a JSON-RPC connection the client uses. */
export interface Rpc {
  sendRequest(method: string, params?: unknown): Promise<unknown>;
  sendNotification(method: string, params?: unknown): Promise<void> | void;
  onNotification(method: string, handler: (params: never) => void): unknown;
  onRequest(method: string, handler: (params: never) => unknown): unknown;
}

export interface Handlers {
  runEvent(event: RunEvent): void;
  /** Asks the user; resolves with their decision. */
  approve(params: ApproveParams): Promise<ApproveResult["decision"]>;
  mcpStatus(status: McpStatus): void;
}

/** What the extension announces in `initializationOptions`. */
export function initializationOptions(config: Record<string, unknown>): Record<string, unknown> {
  return { config, capabilities: { approvals: true, diagnostics: true } };
}

export class CairnClient {
  constructor(private readonly rpc: Rpc) {}

  /** Registers the server-to-client handlers; call before the connection starts. */
  listen(handlers: Handlers): void {
    this.rpc.onNotification(Methods.runEvent, (e: RunEvent) => handlers.runEvent(e));
    this.rpc.onNotification(Methods.mcpStatus, (s: McpStatus) => handlers.mcpStatus(s));
    this.rpc.onRequest(Methods.approve, async (p: ApproveParams): Promise<ApproveResult> => {
      let decision: ApproveResult["decision"];
      try {
        decision = await handlers.approve(p);
      } catch {
        decision = "deny";
      }
      if (!p.options.includes(decision)) {
        // A protected path offers allowOnce and deny only.
        decision = decision === "allowSession" && p.options.includes("allowOnce") ? "allowOnce" : "deny";
      }
      return { approvalId: p.approvalId, runId: p.runId, callId: p.callId, decision };
    });
  }

  chat(params: ChatParams): Promise<ChatResult> {
    return this.rpc.sendRequest(Methods.chat, params) as Promise<ChatResult>;
  }

  async cancel(runId: string): Promise<boolean> {
    const r = (await this.rpc.sendRequest(Methods.cancel, { runId })) as { cancelled: boolean };
    return r.cancelled;
  }

  async sessions(): Promise<SessionSummary[]> {
    const r = (await this.rpc.sendRequest(Methods.sessions, {})) as { sessions: SessionSummary[] };
    return r.sessions;
  }

  async transcript(sessionId: string): Promise<SessionRecord[]> {
    const r = (await this.rpc.sendRequest(Methods.sessions, { sessionId })) as {
      records: SessionRecord[];
    };
    return r.records;
  }

  async tools(sessionId?: string): Promise<ToolInfo[]> {
    const r = (await this.rpc.sendRequest(Methods.tools, sessionId ? { sessionId } : {})) as {
      tools: ToolInfo[];
    };
    return r.tools;
  }

  /** The session's turns that can be rewound to, oldest first. */
  async checkpoints(sessionId: string): Promise<CheckpointTurn[]> {
    const r = (await this.rpc.sendRequest(Methods.checkpoints, { sessionId })) as { turns: CheckpointTurn[] };
    return r.turns;
  }

  /** Restores the files that turns `turn` and later changed. */
  rewind(sessionId: string, turn: number): Promise<RewindResult> {
    return this.rpc.sendRequest(Methods.rewind, { sessionId, turn }) as Promise<RewindResult>;
  }

  /** Summarises the session's older turns. */
  compact(sessionId: string): Promise<CompactResult> {
    return this.rpc.sendRequest(Methods.compact, { sessionId }) as Promise<CompactResult>;
  }

  /** The project rules files a run in `uri`'s context gets. */
  context(params: ContextParams): Promise<ContextResult> {
    return this.rpc.sendRequest(Methods.context, params) as Promise<ContextResult>;
  }

  /** One file's diagnostics, replacing what the server had for it. */
  async diagnostics(params: DiagnosticsParams): Promise<void> {
    await this.rpc.sendNotification(Methods.diagnostics, params);
  }

  mcpStatus(): Promise<McpStatus> {
    return this.command("cairn.mcpStatus") as Promise<McpStatus>;
  }

  async trustWorkspace(): Promise<string[]> {
    const r = (await this.command("cairn.trustWorkspace")) as { trusted: string[] };
    return r.trusted;
  }

  command(command: string, argument?: unknown): Promise<unknown> {
    return this.rpc.sendRequest("workspace/executeCommand", {
      command,
      arguments: argument === undefined ? [] : [argument],
    });
  }
}
