'use strict';

// A field as CSV: empty for null/undefined; quoted (quotes doubled) when it holds , " or a line break.
function csvField(value) {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// rows: objects; columns: [{ key, title }]. A header line, then one line per row.
function toCsv(rows, columns) {
  const lines = [columns.map((c) => csvField(c.title)).join(',')];
  for (const row of rows) {
    lines.push(columns.map((c) => csvField(row[c.key])).join(','));
  }
  return lines.join('\n') + '\n';
}

module.exports = { toCsv, csvField };
