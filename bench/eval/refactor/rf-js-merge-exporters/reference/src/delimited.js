'use strict';

// Delimited text tables. A dialect is { delimiter, escape }: escape turns a field's text
// (empty for null/undefined) into what is written.
const CSV = Object.freeze({
  delimiter: ',',
  escape: (text) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text),
});

const TSV = Object.freeze({
  delimiter: '\t',
  escape: (text) => text.replace(/[\t\r\n]+/g, ' '),
});

// rows: objects; columns: [{ key, title }]. A header line, then one line per row.
function formatTable(rows, columns, dialect) {
  const field = (value) => dialect.escape(value === null || value === undefined ? '' : String(value));
  const line = (values) => values.map(field).join(dialect.delimiter);
  const lines = [line(columns.map((c) => c.title))];
  for (const row of rows) lines.push(line(columns.map((c) => row[c.key])));
  return lines.join('\n') + '\n';
}

module.exports = { formatTable, CSV, TSV };
