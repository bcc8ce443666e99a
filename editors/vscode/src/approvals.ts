// Approval questions waiting for the user's answer in the chat view. Each `cairn/approve` is
// answered exactly once: by the user's button, or with `deny` when its run ends, the server
// stops, or the view goes away.

import { ApproveParams, Decision } from "./protocol";

interface Waiting {
  params: ApproveParams;
  resolve(decision: Decision): void;
}

export class Approvals {
  private readonly waiting = new Map<string, Waiting>();

  /** Registers a question; the promise resolves with the user's decision. */
  ask(params: ApproveParams): Promise<Decision> {
    return new Promise((resolve) => {
      this.waiting.set(params.approvalId, { params, resolve });
    });
  }

  /** The user's answer; false when nothing waits under that id (answered already). */
  answer(approvalId: string, decision: Decision): boolean {
    const w = this.waiting.get(approvalId);
    if (!w) return false;
    this.waiting.delete(approvalId);
    w.resolve(w.params.options.includes(decision) ? decision : "deny");
    return true;
  }

  /** Denies every question of a run (it ended), or every question (no runId). */
  withdraw(runId?: string): number {
    let n = 0;
    for (const [id, w] of [...this.waiting]) {
      if (runId === undefined || w.params.runId === runId) {
        this.waiting.delete(id);
        w.resolve("deny");
        n++;
      }
    }
    return n;
  }

  pending(): ApproveParams[] {
    return [...this.waiting.values()].map((w) => w.params);
  }
}
