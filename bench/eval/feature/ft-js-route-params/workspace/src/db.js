'use strict';

// Users in memory, by id.
function createDb(users = []) {
  const rows = new Map(users.map((u) => [u.id, { ...u }]));
  return {
    list: () => [...rows.values()],
    get: (id) => rows.get(id),
    remove: (id) => rows.delete(id),
  };
}

module.exports = { createDb };
