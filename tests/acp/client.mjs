// An ACP client built on the official TypeScript SDK (npm `@agentclientprotocol/sdk`) that
// drives `cairn acp` through one prompt turn and prints what it saw as one JSON object on stdout.
//
// Usage: node client.mjs CAIRN_BIN WORKSPACE permission allow|reject
//   permission allow|reject  a prompt in a new session in agent mode; every permission request
//                            is answered with the "allow once" or the "reject once" option
// It prints {initialize, session, prompt, updates, permissions}, as tests/acp/client.py does.
// The SDK is loaded from the npm peers (`.peers/npm`, installed by .ci/run); the agent process
// inherits this process's environment (the test sets it up).

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const peers = new URL("../../.peers/npm/package.json", import.meta.url);
const acp = await import(
  pathToFileURL(createRequire(peers).resolve("@agentclientprotocol/sdk")).href
);

const [cairn, workspace, scenario, answer] = process.argv.slice(2);
if (scenario !== "permission" || !["allow", "reject"].includes(answer)) {
  console.error("usage: client.mjs CAIRN_BIN WORKSPACE permission allow|reject");
  process.exit(2);
}

const updates = [];
const permissions = [];
const wanted = answer === "allow" ? "allow_once" : "reject_once";

const app = acp
  .client({ name: "cairn-e2e" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    const option = params.options.find((o) => o.kind === wanted);
    return option
      ? { outcome: { outcome: "selected", optionId: option.optionId } }
      : { outcome: { outcome: "cancelled" } };
  });

// stderr passes through, so the test shows the agent's log when it fails.
const agent = spawn(cairn, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const out = await app.connectWith(stream, async (ctx) => {
  const initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const session = await ctx.request(acp.methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const sessionId = session.sessionId;
  await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "agent" });
  const prompt = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "read notes.txt, then write out.txt" }],
  });
  return { initialize, session, prompt, updates, permissions };
});

// Closing stdin is how a client says goodbye; the agent exits on it.
agent.stdin.end();
if (agent.exitCode === null && agent.signalCode === null) {
  await new Promise((resolve) => agent.once("exit", resolve));
}
process.stdout.write(JSON.stringify(out) + "\n");
