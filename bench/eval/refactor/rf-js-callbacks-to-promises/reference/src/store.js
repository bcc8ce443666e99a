'use strict';

// An in-memory user store; every method returns a promise.
class UserStore {
  constructor(users = []) {
    this.users = new Map(users.map((u) => [u.id, { ...u }]));
    this.writes = 0;
  }

  async get(id) {
    await tick();
    const user = this.users.get(id);
    if (!user) throw new Error(`no user ${id}`);
    return { ...user };
  }

  async save(user) {
    await tick();
    if (!user.name) throw new Error('name is required');
    this.users.set(user.id, { ...user });
    this.writes += 1;
    return { ...user };
  }
}

function tick() {
  return new Promise((resolve) => setImmediate(resolve));
}

module.exports = { UserStore };
