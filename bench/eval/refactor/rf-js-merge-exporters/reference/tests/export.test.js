const assert = require('node:assert/strict');
const { formatTable, CSV } = require('../src/delimited');

test('csv quotes commas', () => {
  assert.equal(formatTable([{ a: 'x,y' }], [{ key: 'a', title: 'A' }], CSV), 'A\n"x,y"\n');
});
