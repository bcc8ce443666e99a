const assert = require('node:assert/strict');
const { UserStore } = require('../src/store');
const { rename } = require('../src/service');

test('rename saves the trimmed name', async () => {
  const store = new UserStore([{ id: 1, name: 'a', active: true }]);
  const user = await rename(store, 1, ' Ada ');
  assert.equal(user.name, 'Ada');
});
