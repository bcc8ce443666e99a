// Deprecated: kept for the old admin bundle, which does not use path aliases.
export const TIMEOUT_MS = 30000;
export const MAX_RETRIES = 5;
