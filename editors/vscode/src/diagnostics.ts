// The editor's diagnostics for the agent: VS Code's problems converted to LSP shapes and sent as
// `cairn/diagnostics` (all of them once after start, then each changed file's, debounced).
// Plain module: the extension hands it VS Code's diagnostics as plain objects; the node tests
// drive it with a fake clock.

import { Diagnostic, DiagnosticsParams } from "./protocol";

/** The parts of a `vscode.Diagnostic` that are sent (its severity is 0 error … 3 hint). */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

/** Diagnostics cairn published itself: never sent back to it. */
export const OWN_SOURCE = "cairn";

/** One VS Code diagnostic as LSP's: severity 1 error … 4 hint; the code's value without its link. */
export function toLsp(d: EditorDiagnostic): Diagnostic {
  const out: Diagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: Math.min(4, Math.max(1, d.severity + 1)) as Diagnostic["severity"],
    message: d.message,
  };
  if (d.source) out.source = d.source;
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== "") out.code = code;
  return out;
}

/** A file's diagnostics as sent: cairn's own left out. */
export function convert(list: readonly EditorDiagnostic[]): Diagnostic[] {
  return list.filter((d) => d.source?.toLowerCase() !== OWN_SOURCE).map(toLsp);
}

/** Timers, so the tests can run the clock themselves. */
export interface Clock {
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export const realClock: Clock = {
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  now: () => Date.now(),
};

export interface SenderOptions {
  /** Sends one `cairn/diagnostics` notification. */
  send(params: DiagnosticsParams): void;
  /** The file's current diagnostics. */
  read(uri: string): readonly EditorDiagnostic[];
  /** Whether the file is in the workspace (only those are sent). */
  inWorkspace(uri: string): boolean;
  /** Quiet time after the last change before sending (default 300 ms). */
  delayMs?: number;
  /** Changes that never stop are still sent this often (default 2000 ms). */
  maxWaitMs?: number;
  clock?: Clock;
}

/** Sends the workspace's diagnostics: everything at start, then changed files, debounced. */
export class DiagnosticsSender {
  /** The last list sent for each file, while it was not empty (an empty list must clear it;
   * the same list is not sent twice). */
  private readonly reported = new Map<string, string>();
  private readonly pending = new Set<string>();
  private timer: unknown;
  private firstPending?: number;
  private readonly clock: Clock;
  private readonly delay: number;
  private readonly maxWait: number;

  constructor(private readonly o: SenderOptions) {
    this.clock = o.clock ?? realClock;
    this.delay = o.delayMs ?? 300;
    this.maxWait = o.maxWaitMs ?? 2000;
  }

  /** Sends every file's diagnostics now (after `initialized`, and after a restart). */
  sendAll(entries: readonly [string, readonly EditorDiagnostic[]][]): void {
    this.reported.clear();
    this.pending.clear();
    this.cancelTimer();
    for (const [uri, list] of entries) this.sendOne(uri, list);
  }

  /** Files whose diagnostics changed: sent once they settle. */
  changed(uris: readonly string[]): void {
    for (const uri of uris) if (this.o.inWorkspace(uri) || this.reported.has(uri)) this.pending.add(uri);
    if (this.pending.size === 0) return;
    const now = this.clock.now();
    this.firstPending ??= now;
    this.cancelTimer();
    const wait = Math.max(0, Math.min(this.delay, this.firstPending + this.maxWait - now));
    this.timer = this.clock.setTimeout(() => this.flush(), wait);
  }

  /** Sends what is pending now. */
  flush(): void {
    this.cancelTimer();
    this.firstPending = undefined;
    const uris = [...this.pending];
    this.pending.clear();
    for (const uri of uris) this.sendOne(uri, this.o.read(uri));
  }

  dispose(): void {
    this.cancelTimer();
    this.pending.clear();
  }

  private sendOne(uri: string, list: readonly EditorDiagnostic[]): void {
    if (!this.o.inWorkspace(uri)) return;
    const diagnostics = convert(list);
    if (diagnostics.length === 0) {
      if (!this.reported.delete(uri)) return;
    } else {
      const key = JSON.stringify(diagnostics);
      if (this.reported.get(uri) === key) return;
      this.reported.set(uri, key);
    }
    this.o.send({ uri, diagnostics });
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
