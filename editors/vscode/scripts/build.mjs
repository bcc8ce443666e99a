// Builds the extension (dist/extension.js, vscode external), the node tests (dist/test/), and
// the grammar's copy (dist/syntaxes/, from grammars/textmate/ at the repository root).
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });

const common = { bundle: true, platform: "node", target: "node20", format: "cjs", sourcemap: true, logLevel: "warning" };
await build({ ...common, minify: true, entryPoints: [join(root, "src/extension.ts")], outfile: join(dist, "extension.js"), external: ["vscode"] });
const tests = readdirSync(join(root, "test")).filter((f) => f.endsWith(".test.ts"));
await build({ ...common, entryPoints: tests.map((f) => join(root, "test", f)), outdir: join(dist, "test"), external: ["vscode", "playwright-core"] });

await build({ ...common, entryPoints: [join(root, "scripts/screenshot.ts")], outfile: join(dist, "screenshot.js"), external: ["playwright-core"] });

export const GRAMMAR = "cairn-chat.tmLanguage.json";
mkdirSync(join(dist, "syntaxes"), { recursive: true });
copyFileSync(join(root, "../../grammars/textmate", GRAMMAR), join(dist, "syntaxes", GRAMMAR));
console.log(`built dist/extension.js, ${tests.length} test files, dist/syntaxes/${GRAMMAR}`);
