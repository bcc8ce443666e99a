const assert = require('node:assert/strict');
const { createApp } = require('../src/app');
const { createDb } = require('../src/db');
const { Router } = require('../src/router');

const USERS = [{ id: 1, name: 'Ada' }, { id: 2, name: 'Lin' }];

test('list users', () => {
  const res = createApp(createDb(USERS)).handle('GET', '/users?page=1');
  assert.equal(res.status, 200);
  assert.equal(res.headers['Content-Type'], 'application/json');
  assert.deepEqual(res.body, USERS);
});

test('unknown paths are 404', () => {
  assert.equal(createApp(createDb(USERS)).handle('GET', '/nowhere').status, 404);
  const router = new Router().add('GET', '/a', () => 'a');
  assert.equal(router.match('GET', '/a').handler(), 'a');
  assert.equal(router.match('GET', '/b'), null);
});
