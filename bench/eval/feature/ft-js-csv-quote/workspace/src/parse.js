'use strict';

// One record per line, fields separated by commas.
function parseLine(line) {
  return line.split(',');
}

// Rows of a CSV text; blank lines are skipped.
function parse(text) {
  return text
    .split(/\r?\n/)
    .filter((line) => line !== '')
    .map(parseLine);
}

// Objects keyed by the first row; missing fields are ''.
function parseObjects(text) {
  const [header = [], ...rows] = parse(text);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

module.exports = { parseLine, parse, parseObjects };
