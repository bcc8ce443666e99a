import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["media/**/*.js"],
    languageOptions: { globals: { acquireVsCodeApi: "readonly", window: "readonly", document: "readonly" } },
  },
  {
    files: ["scripts/**/*.mjs", "scripts/sync-settings"],
    languageOptions: { globals: { console: "readonly", process: "readonly" } },
  },
);
