const assert = require('node:assert/strict');
const { toCsv } = require('../src/csv');

test('csv quotes commas', () => {
  assert.equal(toCsv([{ a: 'x,y' }], [{ key: 'a', title: 'A' }]), 'A\n"x,y"\n');
});
