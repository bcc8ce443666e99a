const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { formatTable, CSV, TSV } = require('../src/delimited');
const { exportContacts, COLUMNS } = require('../src/export');

const COLS = [{ key: 'a', title: 'A' }, { key: 'b', title: 'B "b"' }];
const ROWS = [
  { a: 'plain', b: 'x,y' },
  { a: 'say "hi"', b: 'two\nlines' },
  { a: null, b: 42 },
  { b: 'tab\there' },
];

test('formatTable with CSV writes what toCsv wrote', () => {
  assert.equal(
    formatTable(ROWS, COLS, CSV),
    'A,"B ""b"""\nplain,"x,y"\n"say ""hi""","two\nlines"\n,42\n,tab\there\n',
  );
  assert.equal(formatTable([], COLS, CSV), 'A,"B ""b"""\n');
});

test('formatTable with TSV writes what toTsv wrote', () => {
  assert.equal(
    formatTable(ROWS, COLS, TSV),
    'A\tB "b"\nplain\tx,y\nsay "hi"\ttwo lines\n\t42\n\ttab here\n',
  );
  assert.equal(formatTable([{ a: 'a\r\n\tb' }], [{ key: 'a', title: 'A' }], TSV), 'A\na b\n');
});

test('the differences are parameters of one function', () => {
  assert.equal(CSV.delimiter, ',');
  assert.equal(TSV.delimiter, '\t');
  assert.equal(typeof CSV.escape, 'function');
  assert.equal(typeof TSV.escape, 'function');
  assert.equal(CSV.escape('a"b'), '"a""b"');
  assert.equal(TSV.escape('a\tb'), 'a b');
  const seen = [];
  const pipes = { delimiter: '|', escape: (text) => { seen.push(text); return text.replace(/\|/g, '/').toUpperCase(); } };
  assert.equal(formatTable([{ a: 'x|y', b: undefined }, { a: 0, b: false }], COLS, pipes), 'A|B "B"\nX/Y|\n0|FALSE\n');
  assert.deepEqual(seen, ['A', 'B "b"', 'x|y', '', '0', 'false']);
  for (const old of ['csv.js', 'tsv.js']) {
    assert.equal(fs.existsSync(path.join(__dirname, '..', 'src', old)), false, `src/${old} should be gone`);
  }
});

test('exportContacts keeps both formats', () => {
  assert.deepEqual(COLUMNS.map((c) => c.key), ['name', 'email', 'note']);
  const people = [{ name: 'Ada, L.', email: 'ada@example.org', note: 'met\tat "expo"' }, { name: 'Bo', email: null }];
  assert.equal(
    exportContacts(people, 'csv'),
    'Name,E-mail,Note\n"Ada, L.",ada@example.org,"met\tat ""expo"""\nBo,,\n',
  );
  assert.equal(exportContacts(people, 'tsv'), 'Name\tE-mail\tNote\nAda, L.\tada@example.org\tmet at "expo"\nBo\t\t\n');
  assert.throws(() => exportContacts(people, 'xml'), { message: 'unknown format xml' });
});
