// The VS Code glue: starts `cairn lsp` with vscode-languageclient, hosts the chat view, the
// commands and the MCP status bar item. The logic lives in plain modules (chat, render, client,
// approvals, edits, settings, problems) that the node tests cover; this file only wires them to
// the vscode API.

import * as fs from "node:fs";
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { Approvals } from "./approvals";
import { Chat, ChatData } from "./chat";
import { fromTranscript } from "./chat";
import { CairnClient, initializationOptions } from "./client";
import { DiagnosticsSender, EditorDiagnostic } from "./diagnostics";
import { EditTracker, editTarget } from "./edits";
import { INSTALL_COMMAND, serverStopped, startFailure } from "./problems";
import { ApproveParams, ChatParams, Decision, EventBody, McpStatus, RunEvent } from "./protocol";
import { page, renderChat, renderSessions } from "./render";
import { compactReport, contextPicks, rewindReport, turnPicks } from "./session";
import { configLayer, SettingSpec } from "./settings";
import { statusText } from "./status";

const BEFORE_SCHEME = "cairn-before";

let ext: Extension | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ext = new Extension(context);
  ext.register();
  void ext.start();
}

export async function deactivate(): Promise<void> {
  await ext?.stop();
}

class Extension {
  private lsp?: LanguageClient;
  private client?: CairnClient;
  private readonly output = vscode.window.createOutputChannel("cairn");
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly approvals = new Approvals();
  private readonly edits = new EditTracker();
  private chat: Chat;
  private view?: vscode.WebviewView;
  private stopping = false;
  private renderTimer?: NodeJS.Timeout;
  private lastStatus?: McpStatus;
  private diagnostics?: DiagnosticsSender;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.chat = Chat.from(context.workspaceState.get<ChatData>("cairn.chat"));
  }

  register(): void {
    const c = this.context;
    const cmd = (id: string, f: (...args: unknown[]) => unknown) =>
      c.subscriptions.push(vscode.commands.registerCommand(id, f));
    c.subscriptions.push(
      this.output,
      this.status,
      vscode.window.registerWebviewViewProvider("cairn.chatView", { resolveWebviewView: (v) => this.resolveView(v) }, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, {
        provideTextDocumentContent: (uri) => this.edits.get(uri.query)?.before ?? "",
      }),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.languages.onDidChangeDiagnostics((e) => this.diagnostics?.changed(e.uris.map((u) => u.toString()))),
    );
    cmd("cairn.chat.open", () => this.focusView());
    cmd("cairn.chat.agentOnSelection", () => this.onSelection("agent"));
    cmd("cairn.chat.explain", () => this.onSelection("explain"));
    cmd("cairn.chat.fix", () => this.onSelection("fix"));
    cmd("cairn.chat.stop", () => this.stopRun());
    cmd("cairn.chat.new", () => this.newChat());
    cmd("cairn.tools.list", () => this.listTools());
    cmd("cairn.mcp.status", () => this.showMcpStatus());
    cmd("cairn.workspace.trust", () => this.trustWorkspace());
    cmd("cairn.server.restart", () => this.restart());
    // Not `cairn.rewind`/`cairn.compact`: those are the server's commands, which the language
    // client registers under their own names.
    cmd("cairn.chat.rewind", () => this.rewind());
    cmd("cairn.chat.compact", () => this.compact());
    cmd("cairn.showContext", () => this.showContext());
    this.status.command = "cairn.mcp.status";
    this.status.text = "$(loading~spin) cairn";
    this.status.show();
  }

  // ----- the server -----

  private settingSpecs(): Record<string, SettingSpec> {
    const pkg = this.context.extension.packageJSON as {
      contributes: { configuration: { properties: Record<string, SettingSpec> } };
    };
    return pkg.contributes.configuration.properties;
  }

  private layer(): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration();
    return configLayer(this.settingSpecs(), (key) => config.inspect(key));
  }

  async start(): Promise<void> {
    const path = vscode.workspace.getConfiguration("cairn").get<string>("path") || "cairn";
    const serverOptions: ServerOptions = { command: path, args: ["lsp"] };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      initializationOptions: initializationOptions(this.layer()),
      outputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (!this.stopping) this.serverGone();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    this.stopping = false;
    try {
      // Spawn errors (ENOENT, EACCES) surface here, before the client is made.
      await checkSpawnable(path);
      const lsp = new LanguageClient("cairn", "cairn", serverOptions, clientOptions);
      this.lsp = lsp;
      const client = new CairnClient({
        sendRequest: (method, params) => lsp.sendRequest(method, params),
        sendNotification: (method, params) => lsp.sendNotification(method, params),
        onNotification: (method, handler) => lsp.onNotification(method, handler as (p: unknown) => void),
        onRequest: (method, handler) => lsp.onRequest(method, handler as (p: unknown) => unknown),
      });
      client.listen({
        runEvent: (e) => this.runEvent(e),
        approve: (p) => this.approve(p),
        mcpStatus: (s) => this.mcpStatus(s),
      });
      await lsp.start();
      this.client = client;
      try {
        this.startDiagnostics(lsp, client);
      } catch (error) {
        // The agent then lacks the editor's diagnostics; the rest works.
        this.output.appendLine(`cairn: could not send the diagnostics: ${(error as Error).message}`);
      }
      this.status.text = "$(check) cairn";
      this.status.tooltip = "cairn: server running";
      void this.refreshSessions();
    } catch (error) {
      this.lsp = undefined;
      this.client = undefined;
      const problem = startFailure(path, error);
      this.status.text = "$(error) cairn";
      this.status.tooltip = problem.text;
      this.status.command = "cairn.server.restart";
      this.chat.serverStopped(problem.text, problem.actions);
      this.changed();
      void this.offer(problem.text, problem.actions.includes("install"));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.approvals.withdraw();
    this.diagnostics?.dispose();
    this.diagnostics = undefined;
    const lsp = this.lsp;
    this.lsp = undefined;
    this.client = undefined;
    if (lsp && lsp.state === State.Running) await lsp.stop(2000).catch(() => undefined);
  }

  async restart(): Promise<void> {
    await this.stop();
    this.status.command = "cairn.mcp.status";
    this.status.text = "$(loading~spin) cairn";
    await this.start();
    if (this.client) {
      this.chat.notice("info", "The cairn server was restarted.");
      this.changed();
    }
  }

  private serverGone(): void {
    const problem = serverStopped(this.chat.running);
    this.approvals.withdraw();
    this.diagnostics?.dispose();
    this.diagnostics = undefined;
    this.chat.serverStopped(problem.text, problem.actions);
    this.changed();
    this.status.text = "$(error) cairn";
    this.status.tooltip = problem.text;
    this.status.command = "cairn.server.restart";
    this.lsp = undefined;
    this.client = undefined;
    void this.offer(problem.text, false);
  }

  private async offer(text: string, install: boolean): Promise<void> {
    const items = ["Restart", "Open Settings", ...(install ? ["Copy Install Command"] : []), "Show Log"];
    const pick = await vscode.window.showErrorMessage(text, ...items);
    if (pick === "Restart") await this.restart();
    if (pick === "Open Settings") await vscode.commands.executeCommand("workbench.action.openSettings", "cairn.");
    if (pick === "Copy Install Command") await vscode.env.clipboard.writeText(INSTALL_COMMAND);
    if (pick === "Show Log") this.output.show();
  }

  private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration("cairn")) return;
    if (e.affectsConfiguration("cairn.path")) {
      void vscode.window
        .showInformationMessage("cairn.path changed: restart the cairn server to use it.", "Restart")
        .then((pick) => pick && this.restart());
      return;
    }
    void this.lsp?.sendNotification("workspace/didChangeConfiguration", { settings: { cairn: this.layer() } });
  }

  private requireClient(): CairnClient | undefined {
    if (!this.client) {
      void this.offer("The cairn server is not running.", false);
    }
    return this.client;
  }

  // ----- run events, approvals, edits -----

  private runEvent(e: RunEvent): void {
    this.trackEdits(e, "");
    if (e.kind === "done" || e.kind === "error") this.approvals.withdraw(e.runId);
    if (this.chat.apply(e)) {
      this.changed();
      if (e.kind === "done" || e.kind === "error") void this.refreshSessions();
    }
  }

  /** Keeps the text before each edit, a sub-agent's too (its call ids are its own: prefixed). */
  private trackEdits(e: EventBody, prefix: string): void {
    if (e.kind === "subAgent") this.trackEdits(e.event, `${prefix}${e.callId}/`);
    if (e.kind === "toolCall") this.snapshotEdit(prefix + e.callId, e.name, e.arguments);
    if (e.kind === "edit") this.edits.edited(prefix + e.callId, e.uri, e.applied);
  }

  // ----- diagnostics for the agent -----

  /** Sends every workspace file's diagnostics now, then each change (debounced). */
  private startDiagnostics(lsp: LanguageClient, client: CairnClient): void {
    this.diagnostics?.dispose();
    // What cairn published itself is not sent back (the client's own collection, or its source).
    const own = (uri: vscode.Uri) =>
      new Set((lsp.diagnostics?.get(uri) ?? []).map((d) => `${d.range.start.line}:${d.range.start.character}:${d.message}`));
    const plain = (uri: vscode.Uri, list: readonly vscode.Diagnostic[]): EditorDiagnostic[] => {
      const mine = own(uri);
      return list
        .filter((d) => !mine.has(`${d.range.start.line}:${d.range.start.character}:${d.message}`))
        .map((d) => ({ range: d.range, severity: d.severity, message: d.message, source: d.source, code: d.code }));
    };
    const sender = new DiagnosticsSender({
      send: (p) => void client.diagnostics(p).catch(() => undefined),
      read: (uri) => {
        const u = vscode.Uri.parse(uri);
        return plain(u, vscode.languages.getDiagnostics(u));
      },
      inWorkspace: (uri) => {
        const u = vscode.Uri.parse(uri);
        return u.scheme === "file" && vscode.workspace.getWorkspaceFolder(u) !== undefined;
      },
    });
    this.diagnostics = sender;
    sender.sendAll(vscode.languages.getDiagnostics().map(([uri, list]) => [uri.toString(), plain(uri, list)]));
  }

  // ----- rewind, compact, context -----

  private sessionOrSay(): string | undefined {
    if (!this.chat.sessionId) void vscode.window.showInformationMessage("cairn: this chat has no session yet; send a message first.");
    return this.chat.sessionId;
  }

  private async rewind(): Promise<void> {
    const client = this.requireClient();
    const sessionId = client && this.sessionOrSay();
    if (!client || !sessionId) return;
    if (this.chat.running) {
      void vscode.window.showWarningMessage("cairn: stop the run before rewinding.");
      return;
    }
    const turns = await client.checkpoints(sessionId).catch((e: Error) => {
      void vscode.window.showErrorMessage(`cairn: could not list the turns: ${e.message}`);
      return undefined;
    });
    if (!turns) return;
    if (turns.length === 0) {
      void vscode.window.showInformationMessage("cairn: this session has no turns to rewind.");
      return;
    }
    const pick = await vscode.window.showQuickPick(turnPicks(turns), {
      title: "cairn: rewind the files to before which turn?",
      matchOnDetail: true,
    });
    if (!pick) return;
    const result = await client.rewind(sessionId, pick.turn).catch((e: Error) => {
      void vscode.window.showErrorMessage(`cairn: the rewind failed: ${e.message}`);
      return undefined;
    });
    if (!result) return;
    const report = rewindReport(pick.turn, result);
    this.chat.notice("info", report.info.replace(/^cairn: /, ""));
    if (report.warning) this.chat.notice("warning", report.warning.replace(/^cairn: /, ""));
    this.changed();
    void vscode.window.showInformationMessage(report.info);
    if (report.warning) void vscode.window.showWarningMessage(report.warning);
  }

  private async compact(): Promise<void> {
    const client = this.requireClient();
    const sessionId = client && this.sessionOrSay();
    if (!client || !sessionId) return;
    const result = await client.compact(sessionId).catch((e: Error) => {
      void vscode.window.showErrorMessage(`cairn: could not compact: ${e.message}`);
      return undefined;
    });
    if (result) void vscode.window.showInformationMessage(compactReport(result));
  }

  private async showContext(): Promise<void> {
    const client = this.requireClient();
    if (!client) return;
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const result = await client.context({ uri }).catch((e: Error) => {
      void vscode.window.showErrorMessage(`cairn: could not read the context: ${e.message}`);
      return undefined;
    });
    if (!result) return;
    const { title, items } = contextPicks(result);
    if (items.length === 0) {
      void vscode.window.showInformationMessage(title);
      return;
    }
    const pick = await vscode.window.showQuickPick(items, { title });
    if (pick) await vscode.window.showTextDocument(vscode.Uri.file(pick.label));
  }

  private snapshotEdit(callId: string, name: string, args: unknown): void {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const target = root && editTarget(root, name, args);
    if (!target) return;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target);
    let text: string | undefined;
    if (open) text = open.getText();
    else {
      try {
        text = fs.readFileSync(vscode.Uri.parse(target).fsPath, "utf8");
      } catch {
        text = undefined;
      }
    }
    this.edits.snapshot(callId, target, text);
  }

  private approve(p: ApproveParams): Promise<Decision> {
    if (!this.chat.ask(p)) {
      // A run this view does not show (a chat document's): ask with a notification.
      const labels: Record<Decision, string> = { allowOnce: "Allow once", allowSession: "Allow for this session", deny: "Deny" };
      return Promise.resolve(
        vscode.window
          .showWarningMessage(`cairn: allow \`${p.tool}\`? ${p.reason}`, { modal: true, detail: JSON.stringify(p.arguments, null, 2) }, ...p.options.map((o) => labels[o]))
          .then((pick) => p.options.find((o) => labels[o] === pick) ?? "deny"),
      );
    }
    const answer = this.approvals.ask(p);
    this.changed();
    void this.focusView();
    return answer;
  }

  private async review(action: "diff" | "accept" | "reject", uri: string): Promise<void> {
    const target = vscode.Uri.parse(uri);
    if (action === "diff") {
      const before = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: target.path, query: uri });
      await vscode.commands.executeCommand("vscode.diff", before, target, `${vscode.workspace.asRelativePath(target)} (cairn's edit)`);
      return;
    }
    if (action === "accept") {
      this.edits.accept(uri);
      this.chat.setReview(uri, "accepted");
    } else {
      const r = this.edits.reject(uri);
      if (r) {
        const edit = new vscode.WorkspaceEdit();
        if (r.before === undefined) edit.deleteFile(target, { ignoreIfNotExists: true });
        else {
          const doc = await vscode.workspace.openTextDocument(target);
          edit.replace(target, new vscode.Range(0, 0, doc.lineCount, 0), r.before);
        }
        if (!(await vscode.workspace.applyEdit(edit))) {
          void vscode.window.showErrorMessage(`cairn: could not restore ${vscode.workspace.asRelativePath(target)}.`);
          return;
        }
        if (r.before !== undefined) await (await vscode.workspace.openTextDocument(target)).save();
      }
      this.chat.setReview(uri, "rejected");
    }
    this.changed();
  }

  // ----- MCP status -----

  private mcpStatus(s: McpStatus): void {
    this.lastStatus = s;
    const t = statusText(s);
    this.status.text = t.text;
    this.status.tooltip = t.tooltip;
    this.status.command = "cairn.mcp.status";
  }

  private async showMcpStatus(): Promise<void> {
    const client = this.requireClient();
    if (!client) return;
    const s = await client.mcpStatus().catch(() => this.lastStatus);
    if (!s) return;
    this.mcpStatus(s);
    const items = s.servers.map((srv) => ({
      label: `${srv.name}`,
      description: `${srv.transport} · ${srv.state}${srv.tools !== undefined ? ` · ${srv.tools} tools` : ""}`,
      detail: srv.reason,
    }));
    for (const name of s.waitingForTrust ?? []) items.push({ label: name, description: "waiting for trust", detail: "Run “cairn: Trust This Workspace” to start it." });
    for (const p of s.problems ?? []) items.push({ label: p.server, description: "problem", detail: p.message });
    await vscode.window.showQuickPick(items, { title: "cairn: MCP servers", matchOnDescription: true });
  }

  private async trustWorkspace(): Promise<void> {
    const client = this.requireClient();
    if (!client) return;
    const pick = await vscode.window.showWarningMessage(
      "Trust this workspace's MCP servers? They are programs declared in .cairn/config.toml; they will run with your permissions.",
      { modal: true },
      "Trust",
    );
    if (pick !== "Trust") return;
    const trusted = await client.trustWorkspace();
    void vscode.window.showInformationMessage(
      trusted.length ? `cairn: trusted ${trusted.join(", ")}.` : "cairn: this workspace declares no MCP servers.",
    );
  }

  private async listTools(): Promise<void> {
    const client = this.requireClient();
    if (!client) return;
    const tools = await client.tools(this.chat.sessionId);
    await vscode.window.showQuickPick(
      tools.map((t) => ({ label: t.name, description: `${t.category} · ${t.effect} · ${t.policy}${t.agentOnly ? " · agent only" : ""}`, detail: t.description })),
      { title: `cairn: ${tools.length} tools`, matchOnDetail: true },
    );
  }

  // ----- the chat -----

  private async send(text: string, mode: "chat" | "agent", context?: ChatParams["context"]): Promise<void> {
    const client = this.requireClient();
    if (!client || this.chat.running) return;
    this.chat.addUser(text + (context ? `\n\n_(with ${vscode.workspace.asRelativePath(vscode.Uri.parse(context.uri))})_` : ""), mode);
    this.chat.lastMessage = text;
    this.changed();
    try {
      const r = await client.chat({ message: text, mode, sessionId: this.chat.sessionId, context });
      this.chat.started(r.runId, r.sessionId);
    } catch (error) {
      this.chat.notStarted();
      this.chat.notice("error", `cairn could not start the run: ${(error as Error).message}`, ["retry", "openSettings"]);
    }
    this.changed();
  }

  private async onSelection(kind: "agent" | "explain" | "fix"): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage("cairn: open a file and select code first.");
      return;
    }
    const s = editor.selection;
    const range = s.isEmpty ? undefined : { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } };
    const context = { uri: editor.document.uri.toString(), range };
    await this.focusView();
    if (kind === "explain") return this.send("Explain this code.", "chat", context);
    if (kind === "fix") return this.send("Fix this code with edit_file, then say what you changed.", "agent", context);
    const task = await vscode.window.showInputBox({ prompt: "What should cairn do with the selection?" });
    if (task) await this.send(task, "agent", context);
  }

  private async stopRun(): Promise<void> {
    const runId = this.chat.runId;
    if (!runId || !this.client) return;
    await this.client.cancel(runId).catch(() => false);
  }

  private newChat(): void {
    if (this.chat.running) void this.stopRun();
    this.chat = new Chat();
    this.changed();
  }

  private async openSession(sessionId: string): Promise<void> {
    const client = this.requireClient();
    if (!client || this.chat.running) return;
    this.chat = fromTranscript(sessionId, await client.transcript(sessionId));
    this.changed();
  }

  private async refreshSessions(): Promise<void> {
    const sessions = await this.client?.sessions().catch(() => undefined);
    if (sessions) void this.view?.webview.postMessage({ type: "sessions", html: renderSessions(sessions, this.chat.sessionId) });
  }

  private async focusView(): Promise<void> {
    await vscode.commands.executeCommand("cairn.chatView.focus");
  }

  private resolveView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = page(this.chat, [], {
      cspSource: view.webview.cspSource,
      nonce: crypto.randomBytes(16).toString("base64"),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
    });
    view.webview.onDidReceiveMessage((m: { type: string; text?: string; mode?: "chat" | "agent"; approvalId?: string; decision?: Decision; uri?: string; sessionId?: string }) => {
      switch (m.type) {
        case "ready":
          this.render();
          void this.refreshSessions();
          break;
        case "send":
          if (m.text) void this.send(m.text, m.mode ?? "chat");
          break;
        case "stop":
          void this.stopRun();
          break;
        case "approve":
          if (m.approvalId && m.decision) this.approvals.answer(m.approvalId, m.decision);
          break;
        case "diff":
        case "accept":
        case "reject":
          if (m.uri) void this.review(m.type, m.uri);
          break;
        case "newChat":
          this.newChat();
          break;
        case "openSession":
          if (m.sessionId) void this.openSession(m.sessionId);
          break;
        case "restart":
          void this.restart();
          break;
        case "retry":
          if (this.chat.lastMessage) void this.send(this.chat.lastMessage, this.chat.lastMode);
          break;
        case "openSettings":
          void vscode.commands.executeCommand("workbench.action.openSettings", "cairn.");
          break;
        case "install":
          void vscode.env.clipboard.writeText(INSTALL_COMMAND);
          void vscode.window.showInformationMessage(`Copied: ${INSTALL_COMMAND} (run it in a clone of the cairn repository), then restart the server.`);
          break;
        case "showLog":
          this.output.show();
          break;
      }
    });
  }

  /** The chat changed: save it, and re-render the view soon (events come in bursts). */
  private changed(): void {
    void this.context.workspaceState.update("cairn.chat", this.chat.toJSON());
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.render();
    }, 30);
  }

  private render(): void {
    void this.view?.webview.postMessage({ type: "render", html: renderChat(this.chat), running: this.chat.running });
  }
}

/** Fails with ENOENT/EACCES when `path` cannot be run, so the message can say why. */
async function checkSpawnable(path: string): Promise<void> {
  const { spawn } = await import("node:child_process");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(path, ["--version"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", () => resolve());
  });
}
