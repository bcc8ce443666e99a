// What the session commands show: the turns to rewind to, what a rewind restored and could not,
// a compaction's outcome, the project rules a run gets. Plain module: the extension puts these
// into quick picks and messages; the node tests check the text.

import { CheckpointTurn, CompactResult, ContextResult, RewindResult } from "./protocol";
import { thousands } from "./render";

export interface Pick {
  label: string;
  description?: string;
  detail?: string;
}

function files(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/** The quick pick of turns, latest first (the usual rewind is of the last turn or two). */
export function turnPicks(turns: readonly CheckpointTurn[]): (Pick & { turn: number })[] {
  return [...turns]
    .sort((a, b) => b.turn - a.turn)
    .map((t) => ({
      turn: t.turn,
      label: `Turn ${t.turn}: ${t.message || "(no message)"}`,
      description: t.files.length ? `changed ${files(t.files.length)}` : "changed no files",
      detail: t.files.length ? t.files.join(", ") : undefined,
    }));
}

/** A rewind's report: what was restored (information) and what was not (a warning). */
export function rewindReport(turn: number, r: RewindResult): { info: string; warning?: string } {
  const info = r.restored.length
    ? `cairn: rewound to before turn ${turn}; restored ${files(r.restored.length)}: ${r.restored.join(", ")}.`
    : `cairn: rewound to before turn ${turn}; no file needed restoring.`;
  const problems = [
    ...r.conflicts.map((c) => `${c.path} (left as it is: ${c.reason})`),
    ...r.failed.map((f) => `${f.path} (not restored: ${f.reason})`),
  ];
  return problems.length ? { info, warning: `cairn: ${problems.length} not restored: ${problems.join("; ")}.` } : { info };
}

/** A compaction's outcome, one line. */
export function compactReport(r: CompactResult): string {
  if (!r.compacted) return `cairn: nothing to compact${r.reason ? `: ${r.reason}` : "."}`;
  const turns = r.turns === 1 ? "1 older turn" : `${r.turns ?? 0} older turns`;
  return `cairn: summarised ${turns}: ${thousands(r.tokensBefore ?? 0)} → ${thousands(r.tokensAfter ?? 0)} tokens.`;
}

/** The project rules a run gets, one pick per file. */
export function contextPicks(r: ContextResult): { title: string; items: Pick[] } {
  const used = r.rules.reduce((n, rule) => n + rule.included, 0);
  const title = r.rules.length
    ? `cairn: ${r.rules.length} project rules ${r.rules.length === 1 ? "file" : "files"}, ${thousands(used)} of at most ${thousands(r.maxBytes)} bytes`
    : "cairn: no project rules (AGENTS.md) apply here";
  const items = r.rules.map((rule) => ({
    label: rule.path,
    description: rule.truncated
      ? `${thousands(rule.included)} of ${thousands(rule.bytes)} bytes (cut at the limit)`
      : `${thousands(rule.bytes)} bytes`,
  }));
  return { title, items };
}
