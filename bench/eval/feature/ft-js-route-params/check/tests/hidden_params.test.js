const assert = require('node:assert/strict');
const { createApp } = require('../src/app');
const { createDb } = require('../src/db');
const { Router } = require('../src/router');

const USERS = [{ id: 1, name: 'Ada' }, { id: 2, name: 'Lin' }];

test('router captures named segments', () => {
  const router = new Router()
    .add('GET', '/users/me', () => 'me')
    .add('GET', '/users/:id', () => 'one')
    .add('GET', '/orgs/:org/repos/:repo', () => 'repo');
  const me = router.match('GET', '/users/me');
  assert.equal(me.handler(), 'me');
  assert.deepEqual(me.params, {});
  const one = router.match('GET', '/users/42');
  assert.equal(one.handler(), 'one');
  assert.deepEqual(one.params, { id: '42' });
  assert.deepEqual(router.match('GET', '/orgs/acme/repos/big%20tool').params, { org: 'acme', repo: 'big tool' });
  assert.equal(router.match('GET', '/users/42/extra'), null);
  assert.equal(router.match('GET', '/users/'), null);
  assert.equal(router.match('POST', '/users/42'), null);
});

test('router lists the methods a path allows', () => {
  const router = new Router()
    .add('GET', '/users/:id', () => 1)
    .add('DELETE', '/users/:id', () => 2)
    .add('GET', '/users', () => 3);
  assert.deepEqual(router.allowed('/users/7'), ['GET', 'DELETE']);
  assert.deepEqual(router.allowed('/users'), ['GET']);
  assert.deepEqual(router.allowed('/nothing'), []);
});

test('get one user', () => {
  const app = createApp(createDb(USERS));
  const res = app.handle('GET', '/users/2');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { id: 2, name: 'Lin' });
  const missing = app.handle('GET', '/users/9');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'no such user' });
  for (const bad of ['/users/abc', '/users/0', '/users/1.5', '/users/-3']) {
    const res400 = app.handle('GET', bad);
    assert.equal(res400.status, 400, bad);
    assert.deepEqual(res400.body, { error: 'bad id' });
  }
});

test('delete a user', () => {
  const app = createApp(createDb(USERS));
  const res = app.handle('DELETE', '/users/1');
  assert.equal(res.status, 204);
  assert.equal(res.body, null);
  assert.equal(app.handle('GET', '/users/1').status, 404);
  assert.equal(app.handle('DELETE', '/users/1').status, 404);
  assert.deepEqual(app.handle('GET', '/users').body, [{ id: 2, name: 'Lin' }]);
});

test('a known path with another method is 405', () => {
  const app = createApp(createDb(USERS));
  const res = app.handle('PUT', '/users/1');
  assert.equal(res.status, 405);
  assert.equal(res.headers.Allow, 'GET, DELETE');
  assert.deepEqual(res.body, { error: 'method not allowed' });
  assert.equal(app.handle('POST', '/users').headers.Allow, 'GET');
  assert.equal(app.handle('PUT', '/elsewhere').status, 404);
});
