'use strict';

const { toCsv } = require('./csv');
const { toTsv } = require('./tsv');

const COLUMNS = [
  { key: 'name', title: 'Name' },
  { key: 'email', title: 'E-mail' },
  { key: 'note', title: 'Note' },
];

function exportContacts(contacts, format) {
  if (format === 'csv') return toCsv(contacts, COLUMNS);
  if (format === 'tsv') return toTsv(contacts, COLUMNS);
  throw new Error(`unknown format ${format}`);
}

module.exports = { exportContacts, COLUMNS };
