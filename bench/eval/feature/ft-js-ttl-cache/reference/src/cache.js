'use strict';

// An in-memory key/value cache whose entries may expire: `ttlMs` (milliseconds, optional) by
// default or per entry, timed by `now()` (Date.now by default).
class Cache {
  constructor({ ttlMs, now = Date.now } = {}) {
    this.entries = new Map();
    this.ttlMs = ttlMs;
    this.now = now;
  }

  live(key) {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires !== undefined && this.now() >= entry.expires) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  get(key) {
    const entry = this.live(key);
    return entry ? entry.value : undefined;
  }

  set(key, value, ttlMs = this.ttlMs) {
    const expires = ttlMs === undefined ? undefined : this.now() + ttlMs;
    this.entries.set(key, { value, expires });
    return this;
  }

  has(key) {
    return this.live(key) !== undefined;
  }

  delete(key) {
    return this.entries.delete(key);
  }

  get size() {
    for (const key of [...this.entries.keys()]) this.live(key);
    return this.entries.size;
  }
}

module.exports = { Cache };
