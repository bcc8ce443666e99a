const assert = require('node:assert/strict');
const { Cache } = require('../src/cache');
const { createProfiles } = require('../src/profiles');

function clock(start = 1000) {
  const c = () => c.t;
  c.t = start;
  return c;
}

test('entries expire after ttlMs', () => {
  const now = clock();
  const cache = new Cache({ ttlMs: 100, now });
  cache.set('a', 1);
  now.t += 99;
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.has('a'), true);
  now.t += 1;
  assert.equal(cache.has('a'), false);
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.size, 0);
});

test('a per-entry ttl overrides the default, and no ttl never expires', () => {
  const now = clock();
  const cache = new Cache({ ttlMs: 100, now });
  cache.set('short', 1, 10).set('long', 2, 1000).set('default', 3);
  now.t += 50;
  assert.equal(cache.get('short'), undefined);
  assert.equal(cache.get('long'), 2);
  assert.equal(cache.get('default'), 3);
  assert.equal(cache.size, 2);
  const forever = new Cache({ now });
  forever.set('k', 'v');
  now.t += 1e9;
  assert.equal(forever.get('k'), 'v');
});

test('profiles reload after the ttl', async () => {
  const now = clock();
  let version = 0;
  const profiles = createProfiles(async (id) => ({ id, version: ++version }), { ttlMs: 60000, now });
  assert.equal((await profiles.get(1)).version, 1);
  now.t += 59999;
  assert.equal((await profiles.get(1)).version, 1);
  now.t += 1;
  assert.equal((await profiles.get(1)).version, 2);
  assert.equal(profiles.loads, 2);
});

test('invalidate drops one profile', async () => {
  const profiles = createProfiles(async (id) => ({ id }));
  await profiles.get(1);
  await profiles.get(2);
  profiles.invalidate(1);
  await profiles.get(1);
  await profiles.get(2);
  assert.equal(profiles.loads, 3);
});

test('concurrent gets share one load', async () => {
  let calls = 0;
  let release;
  const gate = new Promise((r) => { release = r; });
  const profiles = createProfiles(async (id) => { calls += 1; await gate; return { id }; });
  const both = Promise.all([profiles.get(5), profiles.get(5)]);
  release();
  const [a, b] = await both;
  assert.deepEqual(a, { id: 5 });
  assert.equal(a, b);
  assert.equal(calls, 1);
  assert.equal(profiles.loads, 1);
});

test('a failed load is not cached', async () => {
  let fail = true;
  const profiles = createProfiles(async (id) => {
    if (fail) throw new Error('backend down');
    return { id };
  });
  await assert.rejects(profiles.get(3), /backend down/);
  fail = false;
  assert.deepEqual(await profiles.get(3), { id: 3 });
  assert.equal(profiles.loads, 2);
});
