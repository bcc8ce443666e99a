'use strict';

function formatField(value) {
  return value === null || value === undefined ? '' : String(value);
}

function formatRow(fields) {
  return fields.map(formatField).join(',');
}

// A CSV text: one line per row, each ended by '\n'.
function format(rows) {
  return rows.map((row) => formatRow(row) + '\n').join('');
}

// A header of `columns`, then one row per object.
function formatObjects(objects, columns) {
  return format([columns, ...objects.map((o) => columns.map((c) => o[c]))]);
}

module.exports = { formatField, formatRow, format, formatObjects };
