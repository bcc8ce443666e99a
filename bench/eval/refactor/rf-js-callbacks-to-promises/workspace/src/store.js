'use strict';

// An in-memory user store with a Node-style callback API: cb(err, result), always async.
class UserStore {
  constructor(users = []) {
    this.users = new Map(users.map((u) => [u.id, { ...u }]));
    this.writes = 0;
  }

  get(id, cb) {
    setImmediate(() => {
      const user = this.users.get(id);
      if (!user) return cb(new Error(`no user ${id}`));
      cb(null, { ...user });
    });
  }

  save(user, cb) {
    setImmediate(() => {
      if (!user.name) return cb(new Error('name is required'));
      this.users.set(user.id, { ...user });
      this.writes += 1;
      cb(null, { ...user });
    });
  }
}

module.exports = { UserStore };
