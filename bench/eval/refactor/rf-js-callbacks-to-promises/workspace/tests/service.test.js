const assert = require('node:assert/strict');
const { UserStore } = require('../src/store');
const { rename } = require('../src/service');

test('rename saves the trimmed name', () => new Promise((resolve, reject) => {
  const store = new UserStore([{ id: 1, name: 'a', active: true }]);
  rename(store, 1, ' Ada ', (err, user) => {
    try {
      assert.equal(err, null);
      assert.equal(user.name, 'Ada');
      resolve();
    } catch (e) {
      reject(e);
    }
  });
}));
