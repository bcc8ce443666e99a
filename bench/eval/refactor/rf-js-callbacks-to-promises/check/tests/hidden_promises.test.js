const assert = require('node:assert/strict');
const { UserStore } = require('../src/store');
const { rename, deactivateAll } = require('../src/service');
const { activeNames } = require('../src/report');

const USERS = [
  { id: 1, name: 'ada', active: true },
  { id: 2, name: 'bob', active: false },
  { id: 3, name: 'cy', active: true },
];

// A store that only speaks promises, recording what is asked of it.
function promiseStore(users, { failGet } = {}) {
  const data = new Map(users.map((u) => [u.id, { ...u }]));
  const log = [];
  return {
    log,
    data,
    get(id) {
      log.push(`get ${id}`);
      if (arguments.length !== 1) throw new Error('get takes only an id');
      return Promise.resolve().then(() => {
        if (id === failGet || !data.has(id)) throw new Error(`no user ${id}`);
        return { ...data.get(id) };
      });
    },
    save(user) {
      log.push(`save ${user.id}`);
      if (arguments.length !== 1) throw new Error('save takes only a user');
      data.set(user.id, { ...user });
      return Promise.resolve({ ...user });
    },
  };
}

test('UserStore methods return promises', async () => {
  const store = new UserStore(USERS);
  assert.equal(store.get.length, 1);
  assert.equal(store.save.length, 1);
  const pending = store.get(1);
  assert.ok(pending instanceof Promise);
  const ada = await pending;
  assert.deepEqual(ada, USERS[0]);
  ada.name = 'changed';
  assert.equal((await store.get(1)).name, 'ada');
  await assert.rejects(store.get(9), { message: 'no user 9' });
  await assert.rejects(store.save({ id: 4, name: '' }), { message: 'name is required' });
  assert.equal(store.writes, 0);
  assert.deepEqual(await store.save({ id: 4, name: 'dee', active: true }), { id: 4, name: 'dee', active: true });
  assert.equal(store.writes, 1);
  assert.equal((await store.get(4)).name, 'dee');
});

test('rename resolves to the saved user', async () => {
  assert.equal(rename.length, 3);
  const store = new UserStore(USERS);
  const pending = rename(store, 3, '  Cyd ');
  assert.ok(pending instanceof Promise);
  assert.deepEqual(await pending, { id: 3, name: 'Cyd', active: true });
  assert.equal((await store.get(3)).name, 'Cyd');
  await assert.rejects(rename(store, 9, 'x'), { message: 'no user 9' });
  await assert.rejects(rename(store, 1, '   '), { message: 'name is required' });
  const fake = promiseStore(USERS);
  assert.equal((await rename(fake, 1, 'Ada')).name, 'Ada');
  assert.deepEqual(fake.log, ['get 1', 'save 1']);
});

test('deactivateAll runs one user after another and stops at an error', async () => {
  assert.equal(deactivateAll.length, 2);
  const store = new UserStore(USERS);
  assert.equal(await deactivateAll(store, [1, 2, 3]), 2);
  assert.equal(store.writes, 2);
  assert.equal(await deactivateAll(store, []), 0);
  const fake = promiseStore(USERS);
  assert.equal(await deactivateAll(fake, [1, 2, 3]), 2);
  assert.deepEqual(fake.log, ['get 1', 'save 1', 'get 2', 'get 3', 'save 3']);
  const failing = promiseStore(USERS, { failGet: 2 });
  await assert.rejects(deactivateAll(failing, [1, 2, 3]), { message: 'no user 2' });
  assert.deepEqual(failing.log, ['get 1', 'save 1', 'get 2']);
});

test('activeNames looks the users up in parallel', async () => {
  assert.equal(activeNames.length, 2);
  assert.deepEqual(await activeNames(new UserStore(USERS), [3, 9, 2, 1]), ['ada', 'cy']);
  assert.deepEqual(await activeNames(new UserStore(USERS), []), []);
  const releases = [];
  const asked = [];
  const gated = {
    get(id) {
      asked.push(id);
      return new Promise((resolve) => releases.push(() => resolve({ ...USERS.find((u) => u.id === id) })));
    },
  };
  const pending = activeNames(gated, [3, 1, 2]);
  assert.ok(pending instanceof Promise);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(asked, [3, 1, 2]);
  releases.forEach((release) => release());
  assert.deepEqual(await pending, ['ada', 'cy']);
});
