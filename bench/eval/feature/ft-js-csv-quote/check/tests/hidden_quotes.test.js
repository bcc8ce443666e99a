const assert = require('node:assert/strict');
const { parseLine, parse, parseObjects } = require('../src/parse');
const { formatField, format, formatObjects } = require('../src/format');

test('quoted fields keep commas and doubled quotes', () => {
  assert.deepEqual(parseLine('"Smith, Ann","say ""hi""",x,""'), ['Smith, Ann', 'say "hi"', 'x', '']);
  assert.deepEqual(parseLine('a,"",b'), ['a', '', 'b']);
});

test('a quoted field may span lines', () => {
  assert.deepEqual(parse('id,note\n1,"two\nlines"\r\n2,"a\r\nb"\n\n3,plain\n'), [
    ['id', 'note'],
    ['1', 'two\nlines'],
    ['2', 'a\r\nb'],
    ['3', 'plain'],
  ]);
});

test('an unterminated quote is a SyntaxError', () => {
  assert.throws(() => parse('a,"open\nb,c\n'), (e) => e instanceof SyntaxError && /unterminated/i.test(e.message));
  assert.throws(() => parseLine('"never closed'), SyntaxError);
});

test('fields are quoted only when needed', () => {
  assert.equal(formatField('plain'), 'plain');
  assert.equal(formatField(42), '42');
  assert.equal(formatField(null), '');
  assert.equal(formatField('a,b'), '"a,b"');
  assert.equal(formatField('say "hi"'), '"say ""hi"""');
  assert.equal(formatField('two\nlines'), '"two\nlines"');
  assert.equal(formatField('cr\r'), '"cr\r"');
  assert.equal(formatField(' padded'), '" padded"');
  assert.equal(formatField('padded '), '"padded "');
});

test('format and parse round-trip', () => {
  const rows = [['name', 'note'], ['Smith, Ann', 'said "no"\nthen left'], ['Bo', ' x ']];
  assert.deepEqual(parse(format(rows)), rows);
  const objects = [{ name: 'Lee, J', qty: '3' }, { name: '"Q"', qty: '' }];
  assert.deepEqual(parseObjects(formatObjects(objects, ['name', 'qty'])), objects);
});
