'use strict';

// Renames a user and resolves to the saved user.
async function rename(store, id, name) {
  const user = await store.get(id);
  user.name = name.trim();
  return store.save(user);
}

// Deactivates the users one after another, skipping those already inactive, and
// resolves to the number of users it saved. Rejects at the first error.
async function deactivateAll(store, ids) {
  let changed = 0;
  for (const id of ids) {
    const user = await store.get(id);
    if (!user.active) continue;
    user.active = false;
    await store.save(user);
    changed += 1;
  }
  return changed;
}

module.exports = { rename, deactivateAll };
