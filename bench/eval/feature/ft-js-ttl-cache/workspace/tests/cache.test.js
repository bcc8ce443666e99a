const assert = require('node:assert/strict');
const { Cache } = require('../src/cache');
const { createProfiles } = require('../src/profiles');

test('cache stores and deletes', () => {
  const cache = new Cache();
  cache.set('a', 1).set('b', 2);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.size, 2);
  assert.equal(cache.delete('a'), true);
  assert.equal(cache.has('a'), false);
  assert.equal(cache.get('a'), undefined);
});

test('profiles are loaded once', async () => {
  const profiles = createProfiles(async (id) => ({ id, name: `user ${id}` }));
  assert.deepEqual(await profiles.get(7), { id: 7, name: 'user 7' });
  await profiles.get(7);
  await profiles.get(8);
  assert.equal(profiles.loads, 2);
});
