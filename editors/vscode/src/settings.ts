// VS Code settings to the server's configuration layer (`initializationOptions.config` and
// `workspace/didChangeConfiguration`). The settings are generated from the server's schema
// (`cairn config schema --vscode`): `cairn.SECTION.KEY` is the configuration key SECTION.KEY.
// Only values the user set are sent (never VS Code's defaults, which would hide the user's and
// the workspace's config.toml), and settings of scope `application` only from user settings.

export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export interface SettingSpec {
  scope?: string;
}

/** Settings of the extension itself, not configuration keys. */
export const EDITOR_ONLY = new Set(["cairn.path"]);

export function configLayer(
  specs: Record<string, SettingSpec>,
  inspect: (key: string) => Inspected | undefined,
): Record<string, unknown> {
  const layer: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    if (EDITOR_ONLY.has(key) || !key.startsWith("cairn.")) continue;
    const i = inspect(key);
    if (!i) continue;
    const userOnly = spec.scope === "application" || spec.scope === "machine";
    const value = userOnly ? i.globalValue : firstDefined(i.workspaceFolderValue, i.workspaceValue, i.globalValue);
    if (value === undefined || value === null) continue;
    setPath(layer, key.slice("cairn.".length).split("."), value);
  }
  return layer;
}

function firstDefined(...values: unknown[]): unknown {
  return values.find((v) => v !== undefined && v !== null);
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (next === undefined || typeof next !== "object" || next === null) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}
