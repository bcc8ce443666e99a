'use strict';

// Reads records starting at `i`; returns the rows. Fields are separated by commas, records by
// '\n' or '\r\n'; a field in double quotes may hold commas, line breaks and '""' (a quote).
function records(text) {
  const rows = [];
  let row = [];
  let field = '';
  let i = 0;
  let fresh = true; // at the start of a field
  let blank = true; // the record has no content yet
  while (i < text.length) {
    const c = text[i];
    if (fresh && c === '"') {
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) throw new SyntaxError(`unterminated quoted field at offset ${i}`);
        field += text.slice(j, q);
        if (text[q + 1] === '"') {
          field += '"';
          j = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      fresh = false;
      blank = false;
      continue;
    }
    if (c === ',') {
      row.push(field);
      field = '';
      fresh = true;
      blank = false;
      i += 1;
      continue;
    }
    if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (!blank) {
        row.push(field);
        rows.push(row);
      }
      row = [];
      field = '';
      fresh = true;
      blank = true;
      i += c === '\r' ? 2 : 1;
      continue;
    }
    field += c;
    fresh = false;
    blank = false;
    i += 1;
  }
  if (!blank) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function parseLine(line) {
  return records(line)[0] || [''];
}

// Rows of a CSV text; blank lines are skipped.
function parse(text) {
  return records(text);
}

// Objects keyed by the first row; missing fields are ''.
function parseObjects(text) {
  const [header = [], ...rows] = parse(text);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

module.exports = { parseLine, parse, parseObjects };
