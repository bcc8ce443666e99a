'use strict';

// Renames a user: cb(err, savedUser).
function rename(store, id, name, cb) {
  store.get(id, (err, user) => {
    if (err) return cb(err);
    user.name = name.trim();
    store.save(user, cb);
  });
}

// Deactivates the users one after another, skipping those already inactive.
// cb(err, changed): the number of users it saved. Stops at the first error.
function deactivateAll(store, ids, cb) {
  let changed = 0;
  let i = 0;
  function next() {
    if (i === ids.length) return cb(null, changed);
    const id = ids[i++];
    store.get(id, (err, user) => {
      if (err) return cb(err);
      if (!user.active) return next();
      user.active = false;
      store.save(user, (err2) => {
        if (err2) return cb(err2);
        changed += 1;
        next();
      });
    });
  }
  next();
}

module.exports = { rename, deactivateAll };
