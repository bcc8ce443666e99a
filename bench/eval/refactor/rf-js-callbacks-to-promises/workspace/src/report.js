'use strict';

// The sorted names of the active users among ids, looked up in parallel;
// unknown ids are skipped. cb(null, names).
function activeNames(store, ids, cb) {
  const names = [];
  let pending = ids.length;
  if (pending === 0) return setImmediate(() => cb(null, names));
  ids.forEach((id) => {
    store.get(id, (err, user) => {
      if (!err && user.active) names.push(user.name);
      pending -= 1;
      if (pending === 0) cb(null, names.sort());
    });
  });
}

module.exports = { activeNames };
