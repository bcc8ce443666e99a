// The vscode glue (dist/extension.js, the bundle VS Code loads) in node, with a stand-in for
// the `vscode` module: commands are registered, and with `cairn` missing the user sees what
// happened and what to do, in a notification and in the chat view.
import { test } from "node:test";
import assert from "node:assert/strict";
import Module from "node:module";
import { join } from "node:path";
import { readFileSync } from "node:fs";

const root = join(__dirname, "../..");

/** Anything: callable, constructible, extendable; every property is another stand-in. */
function anything(): unknown {
  const cache = new Map<PropertyKey, unknown>();
  const target = function () {} as unknown as Record<PropertyKey, unknown>;
  return new Proxy(target, {
    get(t, p) {
      if (p === "prototype") return (t as { prototype: unknown }).prototype;
      if (p === "then") return undefined; // not a promise
      if (p === Symbol.toPrimitive) return () => "";
      if (p === Symbol.iterator) return function* () {};
      if (!cache.has(p)) cache.set(p, anything());
      return cache.get(p);
    },
    apply: () => anything(),
    construct: () => anything() as object,
  });
}

test("with cairn missing, the commands exist and the user is told to install it or set cairn.path", async () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const commands = new Map<string, unknown>();
  const errors: { text: string; items: string[] }[] = [];
  const posted: { type: string; html?: string }[] = [];
  let provider: { resolveWebviewView(view: unknown): void } | undefined;
  let onMessage: ((m: unknown) => void) | undefined;
  const saved = new Map<string, unknown>();
  const base = anything() as Record<string, unknown>;
  const window = new Proxy(base.window as object, {
    get(w, q) {
      if (q === "showErrorMessage") return (text: string, ...items: string[]) => (errors.push({ text, items }), Promise.resolve(undefined));
      if (q === "registerWebviewViewProvider") return (_id: string, p: typeof provider) => ((provider = p), { dispose() {} });
      return (w as Record<PropertyKey, unknown>)[q];
    },
  });
  const workspace = new Proxy(base.workspace as object, {
    get(w, q) {
      if (q === "getConfiguration") return () => ({ get: (k: string) => (k === "path" ? "/nonexistent/cairn" : undefined), inspect: () => undefined });
      if (q === "workspaceFolders") return undefined;
      return (w as Record<PropertyKey, unknown>)[q];
    },
  });
  const commandsApi = { registerCommand: (id: string, f: unknown) => (commands.set(id, f), { dispose() {} }), executeCommand: async () => undefined };
  // Own properties, as `import * as vscode` copies them; the rest (what vscode-languageclient
  // reaches for) are stand-ins.
  const own: Record<string, unknown> = { window, workspace, commands: commandsApi, version: "1.85.0" };
  for (const k of ["env", "Uri", "StatusBarAlignment", "WorkspaceEdit", "Range", "languages", "extensions", "Disposable", "EventEmitter"]) own[k] = base[k];
  const vscode = new Proxy(own, { get: (o, p) => (p in o ? o[p as string] : base[p as string]) });
  const load = (Module as unknown as { _load: (r: string, ...a: unknown[]) => unknown })._load;
  (Module as unknown as { _load: unknown })._load = (request: string, ...rest: unknown[]) =>
    request === "vscode" ? vscode : load(request, ...rest);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(join(root, "dist/extension.js"));
    const context = {
      subscriptions: [] as unknown[],
      workspaceState: { get: (k: string) => saved.get(k), update: async (k: string, v: unknown) => void saved.set(k, v) },
      extension: { packageJSON: pkg },
      extensionUri: anything(),
    };
    ext.activate(context);
    for (const c of pkg.contributes.commands as { command: string }[]) assert.ok(commands.has(c.command), c.command);
    const deadline = Date.now() + 5000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(errors.length, 1);
    assert.match(errors[0].text, /cairn is not installed or not on the PATH: could not start `\/nonexistent\/cairn lsp`/);
    assert.match(errors[0].text, /cargo install --locked --path server\/cairn/);
    assert.match(errors[0].text, /cairn\.path/);
    assert.deepEqual(errors[0].items, ["Restart", "Open Settings", "Copy Install Command", "Show Log"]);
    // The chat view shows it too, with its buttons, and it is saved with the chat.
    assert.ok(provider, "the chat view is registered");
    provider.resolveWebviewView({
      webview: {
        options: {},
        html: "",
        cspSource: "vscode-resource:",
        asWebviewUri: (u: unknown) => u,
        postMessage: async (m: { type: string; html?: string }) => void posted.push(m),
        onDidReceiveMessage: (f: (m: unknown) => void) => void (onMessage = f),
      },
    });
    onMessage!({ type: "ready" });
    const render = posted.find((m) => m.type === "render");
    assert.ok(render?.html, JSON.stringify(posted));
    assert.match(render.html, /cairn is not installed or not on the PATH/);
    assert.match(render.html, /data-action="install">How to install</);
    assert.match(render.html, /data-action="restart">Restart server</);
    const chat = saved.get("cairn.chat") as { items: { type: string; text?: string }[] };
    assert.ok(chat.items.some((i) => i.type === "notice" && /not installed/.test(i.text ?? "")));
    await ext.deactivate();
  } finally {
    (Module as unknown as { _load: unknown })._load = load;
  }
});
