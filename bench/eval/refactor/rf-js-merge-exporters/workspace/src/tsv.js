'use strict';

// A field as TSV: empty for null/undefined; tabs and line breaks become one space.
function tsvField(value) {
  const text = value === null || value === undefined ? '' : String(value);
  return text.replace(/[\t\r\n]+/g, ' ');
}

// rows: objects; columns: [{ key, title }]. A header line, then one line per row.
function toTsv(rows, columns) {
  const lines = [columns.map((c) => tsvField(c.title)).join('\t')];
  for (const row of rows) {
    lines.push(columns.map((c) => tsvField(row[c.key])).join('\t'));
  }
  return lines.join('\n') + '\n';
}

module.exports = { toTsv, tsvField };
