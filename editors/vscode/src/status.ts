// The status bar item's text for `cairn/mcpStatus`.

import { McpStatus } from "./protocol";

export function statusText(s: McpStatus): { text: string; tooltip: string } {
  const running = s.servers.filter((x) => x.state === "running").length;
  const failed = s.servers.filter((x) => x.state === "failed");
  const starting = s.servers.filter((x) => x.state === "starting" || x.state === "restarting").length;
  const waiting = s.waitingForTrust?.length ?? 0;
  const problems = (s.problems?.length ?? 0) + (s.reviews?.length ?? 0);
  const icon = failed.length ? "$(error)" : waiting || problems ? "$(warning)" : starting ? "$(sync~spin)" : "$(plug)";
  let text = `${icon} cairn MCP ${running}/${s.servers.length}`;
  if (waiting) text += ` · ${waiting} untrusted`;
  const lines = s.servers.map(
    (x) => `${x.name} (${x.transport}): ${x.state}${x.tools !== undefined ? `, ${x.tools} tools` : ""}${x.reason ? ` — ${x.reason}` : ""}`,
  );
  if (waiting) lines.push(`waiting for trust: ${s.waitingForTrust!.join(", ")} (run “cairn: Trust This Workspace”)`);
  for (const p of s.problems ?? []) lines.push(`${p.server}: ${p.message}`);
  for (const r of s.reviews ?? []) lines.push(`${r.publicName}: disabled until approved (cairn mcp review)`);
  return { text, tooltip: lines.join("\n") };
}
