// What the user is told when the server cannot start or stops: what happened and what to do.

import { NoticeAction } from "./chat";

export const INSTALL_COMMAND = "cargo install --locked --path server/cairn";

export interface Problem {
  text: string;
  actions: NoticeAction[];
}

/** `cairn` could not be started (spawn failed). */
export function startFailure(path: string, error: unknown): Problem {
  const code = (error as { code?: string } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ENOENT" || /ENOENT|not found/i.test(message)) {
    return {
      text:
        `cairn is not installed or not on the PATH: could not start \`${path} lsp\`. ` +
        `Install it from the cairn repository with \`${INSTALL_COMMAND}\`, ` +
        "or set the setting cairn.path to the binary, then restart the server.",
      actions: ["install", "openSettings", "restart"],
    };
  }
  if (code === "EACCES") {
    return {
      text: `cairn.path \`${path}\` is not executable (${message}). Fix the setting cairn.path, then restart the server.`,
      actions: ["openSettings", "restart"],
    };
  }
  return {
    text: `The cairn server could not start: ${message}. Check the setting cairn.path and the output channel "cairn", then restart.`,
    actions: ["showLog", "openSettings", "restart"],
  };
}

/** The server stopped while the extension was using it. */
export function serverStopped(running: boolean): Problem {
  return {
    text:
      "The cairn server stopped unexpectedly" +
      (running ? ", in the middle of this answer" : "") +
      ". The chat so far is kept. Restart the server to go on; the output channel \"cairn\" shows its log.",
    actions: ["restart", "showLog"],
  };
}
