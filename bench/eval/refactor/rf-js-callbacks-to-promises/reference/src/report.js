'use strict';

// Resolves to the sorted names of the active users among ids, looked up in parallel;
// unknown ids are skipped.
async function activeNames(store, ids) {
  const users = await Promise.all(ids.map((id) => store.get(id).catch(() => null)));
  return users.filter((user) => user && user.active).map((user) => user.name).sort();
}

module.exports = { activeNames };
