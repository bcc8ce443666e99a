'use strict';

const { Cache } = require('./cache');

// Profiles loaded through `load(id)` (returns a promise), each loaded once and then cached.
function createProfiles(load) {
  const cache = new Cache();
  let loads = 0;
  return {
    async get(id) {
      if (cache.has(id)) return cache.get(id);
      loads += 1;
      const profile = await load(id);
      cache.set(id, profile);
      return profile;
    },
    get loads() {
      return loads;
    },
  };
}

module.exports = { createProfiles };
