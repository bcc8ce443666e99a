// The chat-document grammar (grammars/textmate/), tokenized by VS Code's own TextMate engine,
// and the copy the extension ships (dist/syntaxes/, made by the build) is the current one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";

const root = join(__dirname, "../..");
const source = join(root, "../../grammars/textmate/cairn-chat.tmLanguage.json");
const shipped = join(root, "dist/syntaxes/cairn-chat.tmLanguage.json");

test("the extension ships the current grammar", () => {
  assert.equal(
    readFileSync(shipped, "utf8"),
    readFileSync(source, "utf8"),
    "dist/syntaxes is stale: run `npm run build` (it copies grammars/textmate/)",
  );
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.equal(pkg.contributes.grammars[0].path, "./dist/syntaxes/cairn-chat.tmLanguage.json");
});

async function grammar(): Promise<textmate.IGrammar> {
  const wasm = readFileSync(join(root, "node_modules/vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p: string[]) => new oniguruma.OnigScanner(p),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) => {
      if (scope === "text.cairn-chat") return textmate.parseRawGrammar(readFileSync(source, "utf8"), source);
      // VS Code brings JSON and Markdown; here they are empty stand-ins.
      return textmate.parseRawGrammar(JSON.stringify({ scopeName: scope, patterns: [] }), `${scope}.json`);
    },
  });
  const g = await registry.loadGrammar("text.cairn-chat");
  assert.ok(g);
  return g;
}

/** Each line's tokens as `text: scopes` for the tokens that carry a cairn-chat scope. */
async function scopes(doc: string): Promise<Map<string, string[]>> {
  const g = await grammar();
  let stack = textmate.INITIAL;
  const out = new Map<string, string[]>();
  for (const line of doc.split("\n")) {
    const r = g.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      const text = line.slice(t.startIndex, t.endIndex);
      if (text.trim()) out.set(`${text}`, t.scopes);
      if (process.env.GRAMMAR_DEBUG) console.error(JSON.stringify(text), t.scopes.join(" "));
    }
    stack = r.ruleStack;
  }
  return out;
}

test("roles, tool blocks and event lines get their scopes; quoted headings do not", async () => {
  const doc = [
    "Notes before the first turn.",
    "## You",
    "Explain main.",
    "## cairn",
    "```tool-call read_file",
    '{"path": "src/main.rs"}',
    "```",
    "```tool-result error",
    "no such file",
    "… (3 more lines)",
    "```",
    "> cairn asks: allow `edit_file`?",
    "> denied",
    "~~~markdown",
    "## You (quoted)",
    "~~~",
  ].join("\n");
  const s = await scopes(doc);
  const has = (text: string, scope: string) =>
    assert.ok(s.get(text)?.some((x) => x.includes(scope)), `${text}: ${JSON.stringify(s.get(text))}`);
  has("You", "entity.name.role.user.cairn-chat");
  has("cairn", "entity.name.role.assistant.cairn-chat");
  has("tool-call", "keyword.other.tool-call.cairn-chat");
  has("read_file", "entity.name.function.tool.cairn-chat");
  has('{"path": "src/main.rs"}', "meta.tool-call.cairn-chat");
  has("error", "invalid.illegal.error.cairn-chat");
  has("no such file", "markup.raw.tool-output.cairn-chat");
  has("… (3 more lines)", "comment.line.truncated.cairn-chat");
  has("cairn asks: allow `edit_file`?", "meta.event.cairn-chat");
  has("denied", "meta.event.cairn-chat");
  has("## You (quoted)", "markup.raw.block.markdown");
  assert.ok(!s.get("Notes before the first turn.")?.some((x) => x.includes("role")));
});

test("plans, hooks, sub-agents and compactions are event lines; a failed or denying hook stands out", async () => {
  const doc = [
    "## cairn",
    "> plan (1/3 done):",
    "> - [x] Read the parser",
    "> - [~] Fix the bug",
    "> - [ ] Run the tests",
    "> sub-agent: grep {\"pattern\":\"fn tokenize\"}",
    "> hook allowed (before the call): ./check.sh",
    "> hook failed (at the end of the turn): ./lint.sh: exit status 127",
    "> hook denied (before the call): ./check.sh: frozen",
    "> compacted: 12 older turns summarised, 30,210 → 2,150 tokens",
    "```tool-summary",
    "## You",
    "```",
  ].join("\n");
  const s = await scopes(doc);
  const has = (text: string, scope: string) =>
    assert.ok(s.get(text)?.some((x) => x.includes(scope)), `${text}: ${JSON.stringify(s.get(text))}`);
  for (const line of [
    "plan (1/3 done):",
    "- [x] Read the parser",
    "- [~] Fix the bug",
    "- [ ] Run the tests",
    'sub-agent: grep {"pattern":"fn tokenize"}',
    "hook allowed (before the call): ./check.sh",
    "compacted: 12 older turns summarised, 30,210 → 2,150 tokens",
  ]) {
    has(line, "string.other.event.cairn-chat");
  }
  has("hook failed (at the end of the turn): ./lint.sh: exit status 127", "invalid.illegal.hook.cairn-chat");
  has("hook denied (before the call): ./check.sh: frozen", "invalid.illegal.hook.cairn-chat");
  has("## You", "markup.raw.block.markdown");
});
