const assert = require('node:assert/strict');
const { parse, parseObjects } = require('../src/parse');
const { format, formatObjects } = require('../src/format');

test('parse plain rows', () => {
  assert.deepEqual(parse('a,b\n1,2\r\n\n3,\n'), [['a', 'b'], ['1', '2'], ['3', '']]);
});

test('parse objects', () => {
  assert.deepEqual(parseObjects('name,qty\ntea,2\nmug\n'), [
    { name: 'tea', qty: '2' },
    { name: 'mug', qty: '' },
  ]);
});

test('format rows and objects', () => {
  assert.equal(format([['a', 1], [null, 'b']]), 'a,1\n,b\n');
  assert.equal(formatObjects([{ name: 'tea', qty: 2 }], ['name', 'qty']), 'name,qty\ntea,2\n');
});
