'use strict';

const { Cache } = require('./cache');

// Profiles loaded through `load(id)` (returns a promise) and cached, for `ttlMs` when given.
function createProfiles(load, { ttlMs, now } = {}) {
  const cache = new Cache({ ttlMs, now });
  const pending = new Map();
  let loads = 0;
  return {
    async get(id) {
      if (cache.has(id)) return cache.get(id);
      if (pending.has(id)) return pending.get(id);
      loads += 1;
      const loading = (async () => {
        try {
          const profile = await load(id);
          cache.set(id, profile);
          return profile;
        } finally {
          pending.delete(id);
        }
      })();
      pending.set(id, loading);
      return loading;
    },
    invalidate(id) {
      cache.delete(id);
    },
    get loads() {
      return loads;
    },
  };
}

module.exports = { createProfiles };
