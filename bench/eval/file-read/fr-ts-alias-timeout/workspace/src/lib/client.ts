import { MAX_RETRIES, TIMEOUT_MS } from "@config/http";

export interface ClientOptions {
  baseUrl: string;
  timeoutMs?: number;
  retries?: number;
}

export function createClient(opts: ClientOptions) {
  const timeout = opts.timeoutMs ?? TIMEOUT_MS;
  const retries = opts.retries ?? MAX_RETRIES;
  return async (path: string, init: RequestInit = {}) => {
    const signal = AbortSignal.timeout(timeout);
    return fetch(new URL(path, opts.baseUrl), { ...init, signal });
  };
}
