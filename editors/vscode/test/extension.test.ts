// The vscode glue (dist/extension.js, the bundle VS Code loads) in node, with a stand-in for
// the `vscode` module: commands are registered; with `cairn` missing the user sees what happened
// and what to do; with the real `cairn lsp` ($CAIRN_BIN) and the scripted model, a chat sent from
// the view asks its approval in the view and ends with the answer there, and a server killed
// mid-run is met by the extension's own close handler (the run ends in the view, restart offered).
import { test } from "node:test";
import assert from "node:assert/strict";
import Module from "node:module";
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { join, dirname } from "node:path";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";

const root = join(__dirname, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

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

interface Fake {
  commands: Map<string, unknown>;
  errors: { text: string; items: string[] }[];
  posted: { type: string; html?: string; running?: boolean }[];
  saved: Map<string, unknown>;
  ext: { activate(c: unknown): void; deactivate(): Promise<void> };
  context: unknown;
  /** Opens the chat view; returns the function the page's messages go to. */
  openView(): (m: unknown) => void;
  unload(): void;
}

function load(path: string, folder?: string): Fake {
  const commands = new Map<string, unknown>();
  const errors: Fake["errors"] = [];
  const posted: Fake["posted"] = [];
  const saved = new Map<string, unknown>();
  let provider: { resolveWebviewView(view: unknown): void } | undefined;
  const base = anything() as Record<string, unknown>;
  const window = new Proxy(base.window as object, {
    get(w, q) {
      if (q === "showErrorMessage") return (text: string, ...items: string[]) => (errors.push({ text, items }), Promise.resolve(undefined));
      if (q === "registerWebviewViewProvider") return (_id: string, p: typeof provider) => ((provider = p), { dispose() {} });
      return (w as Record<PropertyKey, unknown>)[q];
    },
  });
  const uri = folder ? { scheme: "file", fsPath: folder, path: folder, toString: () => pathToFileURL(folder).toString() } : undefined;
  const workspace = new Proxy(base.workspace as object, {
    get(w, q) {
      if (q === "getConfiguration") return () => ({ get: (k: string) => (k === "path" ? path : undefined), inspect: () => undefined, has: () => false });
      if (q === "workspaceFolders") return uri ? [{ uri, name: "ws", index: 0 }] : undefined;
      if (q === "textDocuments") return [];
      return (w as Record<PropertyKey, unknown>)[q];
    },
  });
  const commandsApi = { registerCommand: (id: string, f: unknown) => (commands.set(id, f), { dispose() {} }), executeCommand: async () => undefined };
  // Own properties, as `import * as vscode` copies them; the rest (what vscode-languageclient
  // reaches for) are stand-ins.
  const own: Record<string, unknown> = { window, workspace, commands: commandsApi, version: "1.85.0" };
  own.env = new Proxy(base.env as object, {
    get: (e, q) => (q === "appName" ? "VS Code (stand-in)" : q === "language" ? "en" : (e as Record<PropertyKey, unknown>)[q]),
  });
  for (const k of ["Uri", "StatusBarAlignment", "WorkspaceEdit", "Range", "languages", "extensions", "Disposable", "EventEmitter"]) own[k] = base[k];
  const vscode = new Proxy(own, { get: (o, p) => (p in o ? o[p as string] : base[p as string]) });
  const original = (Module as unknown as { _load: (r: string, ...a: unknown[]) => unknown })._load;
  (Module as unknown as { _load: unknown })._load = (request: string, ...rest: unknown[]) =>
    request === "vscode" ? vscode : original(request, ...rest);
  const bundle = join(root, "dist/extension.js");
  delete require.cache[bundle];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(bundle);
  const context = {
    subscriptions: [] as unknown[],
    workspaceState: { get: (k: string) => saved.get(k), update: async (k: string, v: unknown) => void saved.set(k, v) },
    extension: { packageJSON: pkg },
    extensionUri: anything(),
  };
  return {
    commands, errors, posted, saved, ext, context,
    openView: () => {
      assert.ok(provider, "the chat view is registered");
      let onMessage: ((m: unknown) => void) | undefined;
      provider.resolveWebviewView({
        webview: {
          options: {},
          html: "",
          cspSource: "vscode-resource:",
          asWebviewUri: (u: unknown) => u,
          postMessage: async (m: Fake["posted"][number]) => void posted.push(m),
          onDidReceiveMessage: (f: (m: unknown) => void) => void (onMessage = f),
        },
      });
      return (m) => onMessage!(m);
    },
    unload: () => {
      (Module as unknown as { _load: unknown })._load = original;
    },
  };
}

async function until<T>(f: () => T | undefined, what: string, ms = 20000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const lastRender = (f: Fake) => [...f.posted].reverse().find((m) => m.type === "render");

test("with cairn missing, the commands exist and the user is told to install it or set cairn.path", async () => {
  const f = load("/nonexistent/cairn");
  try {
    f.ext.activate(f.context);
    for (const c of pkg.contributes.commands as { command: string }[]) assert.ok(f.commands.has(c.command), c.command);
    await until(() => f.errors.length > 0 || undefined, "the error message", 5000);
    assert.equal(f.errors.length, 1);
    assert.match(f.errors[0].text, /cairn is not installed or not on the PATH: could not start `\/nonexistent\/cairn lsp`/);
    assert.match(f.errors[0].text, /cargo install --locked --path server\/cairn/);
    assert.match(f.errors[0].text, /cairn\.path/);
    assert.deepEqual(f.errors[0].items, ["Restart", "Open Settings", "Copy Install Command", "Show Log"]);
    // The chat view shows it too, with its buttons, and it is saved with the chat.
    f.openView()({ type: "ready" });
    const render = lastRender(f);
    assert.ok(render?.html, JSON.stringify(f.posted));
    assert.match(render.html, /cairn is not installed or not on the PATH/);
    assert.match(render.html, /data-action="install">How to install</);
    assert.match(render.html, /data-action="restart">Restart server</);
    const chat = f.saved.get("cairn.chat") as { items: { type: string; text?: string }[] };
    assert.ok(chat.items.some((i) => i.type === "notice" && /not installed/.test(i.text ?? "")));
    await f.ext.deactivate();
  } finally {
    f.unload();
  }
});

const CAIRN = process.env.CAIRN_BIN;
const skip = CAIRN ? false : "CAIRN_BIN is not set";
if (!CAIRN) process.stderr.write("extension.test: the real-server test is skipped: set CAIRN_BIN to target/debug/cairn\n");

test("through the glue and the real cairn lsp: send, approve in the view, the answer", { skip, timeout: 60000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-vscode-glue-"));
  const ws = join(dir, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "notes.txt"), "The answer is 42.\n");
  writeFileSync(join(dir, "script.json"), JSON.stringify([
    { toolCalls: [{ name: "edit_file", arguments: { path: "notes.txt", old_string: "42", new_string: "43" } }] },
    { text: "Changed it to **43**." },
  ]));
  const model: ChildProcess = spawn(process.env.SCRIPTED_MODEL || join(dirname(CAIRN!), "scripted-model"), ["--format", "openai", "--script", join(dir, "script.json")], { stdio: ["ignore", "pipe", "inherit"] });
  const saved = { ...process.env };
  const f = load(CAIRN!, ws);
  try {
    const url = await new Promise<string>((resolve) => {
      let out = "";
      model.stdout!.on("data", (d: Buffer) => (out += d) && out.includes("\n") && resolve(out.trim()));
    });
    // The server inherits the extension host's environment.
    Object.assign(process.env, {
      HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "home/config"), XDG_DATA_HOME: join(dir, "home/data"),
      OPENAI_BASE_URL: url, CAIRN_MODEL: "scripted", CAIRN_SELECTION__FILTER: "false", HF_HUB_OFFLINE: "1",
      CAIRN_PROVIDER__MAX_RETRIES: "0", DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/cairn-vscode-no-bus",
    });
    delete process.env.OPENAI_API_KEY;
    f.ext.activate(f.context);
    const post = f.openView();
    post({ type: "ready" });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(f.errors, [], "the server started");
    post({ type: "send", text: "Make it 43", mode: "agent" });
    const asking = await until(() => {
      const r = lastRender(f);
      return r?.html?.includes("data-decision") ? r : undefined;
    }, "the approval question in the view");
    assert.match(asking.html!, /cairn asks: allow <code>edit_file<\/code>\?/);
    const approvalId = /data-approval="([^"]+)" data-decision="allowOnce"/.exec(asking.html!)![1];
    assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "The answer is 42.\n");
    post({ type: "approve", approvalId, decision: "allowOnce" });
    const end = await until(() => {
      const r = lastRender(f);
      return r && r.running === false && r.html?.includes("Changed it to") ? r : undefined;
    }, "the answer");
    assert.match(end.html!, /<strong>43<\/strong>/);
    assert.match(end.html!, /Approval answered: allow once\./);
    assert.match(end.html!, /data-action="accept"/, "the edit waits for review");
    assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "The answer is 43.\n");
    await f.ext.deactivate();
  } finally {
    f.unload();
    process.env = saved;
    model.kill("SIGKILL");
  }
});

test("the server dying mid-run, through the extension's own handler: the run ends in the view, the chat stays, restart is offered", { skip, timeout: 60000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-vscode-crash-"));
  const ws = join(dir, "ws");
  mkdirSync(ws);
  writeFileSync(join(dir, "script.json"), JSON.stringify([{ text: "Working on it", fault: { kind: "stallMidStream" } }]));
  const model: ChildProcess = spawn(process.env.SCRIPTED_MODEL || join(dirname(CAIRN!), "scripted-model"), ["--format", "openai", "--script", join(dir, "script.json")], { stdio: ["ignore", "pipe", "inherit"] });
  const saved = { ...process.env };
  const f = load(CAIRN!, ws);
  try {
    const url = await new Promise<string>((resolve) => {
      let out = "";
      model.stdout!.on("data", (d: Buffer) => (out += d) && out.includes("\n") && resolve(out.trim()));
    });
    Object.assign(process.env, {
      HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "home/config"), XDG_DATA_HOME: join(dir, "home/data"),
      OPENAI_BASE_URL: url, CAIRN_MODEL: "scripted", CAIRN_SELECTION__FILTER: "false", HF_HUB_OFFLINE: "1",
      CAIRN_PROVIDER__MAX_RETRIES: "0", DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/cairn-vscode-no-bus",
    });
    delete process.env.OPENAI_API_KEY;
    f.ext.activate(f.context);
    const post = f.openView();
    post({ type: "ready" });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(f.errors, [], "the server started");
    post({ type: "send", text: "Do the thing", mode: "chat" });
    await until(() => {
      const r = lastRender(f);
      return r?.running && r.html?.includes("Working on") ? r : undefined;
    }, "the first words in the view");
    assert.deepEqual(f.errors, [], "nothing went wrong yet");
    // The language client started `cairn lsp` as a child of this process: kill it.
    const pids = execFileSync("pgrep", ["-P", String(process.pid), "-x", "cairn"], { encoding: "utf8" }).trim().split("\n");
    assert.equal(pids.length, 1, `one cairn child: ${pids}`);
    process.kill(Number(pids[0]), "SIGKILL");
    // Only the extension's own close handler can end the run in the view and say so.
    const end = await until(() => {
      const r = lastRender(f);
      return r && r.running === false ? r : undefined;
    }, "the run ended in the view");
    assert.match(end.html!, /Do the thing/);
    assert.match(end.html!, /Working on/, "the words shown before the crash stay");
    assert.match(end.html!, /The cairn server stopped unexpectedly, in the middle of this answer/);
    assert.match(end.html!, /data-action="restart">Restart server</);
    // (Read through a fresh reference: the check above narrowed `f.errors` to an empty list.)
    const errors: Fake["errors"] = (f as Fake).errors;
    await until(() => errors.length > 0 || undefined, "the error message", 5000);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.match(errors[0].text, /The cairn server stopped unexpectedly, in the middle of this answer\. The chat so far is kept/);
    assert.deepEqual(errors[0].items, ["Restart", "Open Settings", "Show Log"]);
    const chat = f.saved.get("cairn.chat") as { items: { type: string; text?: string }[] };
    assert.ok(chat.items.some((i) => i.type === "notice" && /stopped unexpectedly/.test(i.text ?? "")), "saved with the chat");
    await f.ext.deactivate();
  } finally {
    f.unload();
    process.env = saved;
    model.kill("SIGKILL");
  }
});
