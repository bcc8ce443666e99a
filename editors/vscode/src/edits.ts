// Bookkeeping of the agent's edits, so the user can review each edited file as a diff and
// accept (keep) or reject (restore the text from before the run's first edit of it).

export interface Review {
  uri: string;
  /** The file's text before the agent's first edit of it; undefined when it did not exist. */
  before: string | undefined;
  edits: number;
}

export class EditTracker {
  /** Snapshots taken when an editing tool call was announced, by callId. */
  private readonly snapshots = new Map<string, { uri: string; text: string | undefined }>();
  private readonly reviews = new Map<string, Review>();

  /**
   * Remembers `text` as the content of `uri` before the call `callId` edits it. Taken when the
   * `toolCall` event arrives, which the server sends before the tool runs.
   */
  snapshot(callId: string, uri: string, text: string | undefined): void {
    this.snapshots.set(callId, { uri, text });
  }

  /** An `edit` event: an applied edit opens (or extends) the review of its file. */
  edited(callId: string, uri: string, applied: boolean): Review | undefined {
    const snap = this.snapshots.get(callId);
    this.snapshots.delete(callId);
    if (!applied) return undefined;
    const existing = this.reviews.get(uri);
    if (existing) {
      existing.edits++;
      return existing;
    }
    if (!snap || snap.uri !== uri) return undefined;
    const review = { uri, before: snap.text, edits: 1 };
    this.reviews.set(uri, review);
    return review;
  }

  get(uri: string): Review | undefined {
    return this.reviews.get(uri);
  }

  pending(): Review[] {
    return [...this.reviews.values()];
  }

  /** Keeps the edits. */
  accept(uri: string): boolean {
    return this.reviews.delete(uri);
  }

  /** Drops the review and returns the text to restore. */
  reject(uri: string): Review | undefined {
    const r = this.reviews.get(uri);
    this.reviews.delete(uri);
    return r;
  }
}

/** The file an `edit_file`-style call names, as a URI under `root` (a `file://` URI). */
export function editTarget(root: string, name: string, args: unknown): string | undefined {
  if (name !== "edit_file" && name !== "write_file" && name !== "create_file") return undefined;
  if (!args || typeof args !== "object") return undefined;
  const path = (args as { path?: unknown }).path;
  if (typeof path !== "string" || path === "") return undefined;
  const base = root.endsWith("/") ? root : root + "/";
  return path.startsWith("/") ? "file://" + encodePath(path) : base + encodePath(path);
}

function encodePath(p: string): string {
  return p.split("/").map(encodeURIComponent).join("/");
}
