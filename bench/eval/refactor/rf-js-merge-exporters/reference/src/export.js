'use strict';

const { formatTable, CSV, TSV } = require('./delimited');

const COLUMNS = [
  { key: 'name', title: 'Name' },
  { key: 'email', title: 'E-mail' },
  { key: 'note', title: 'Note' },
];

const DIALECTS = { csv: CSV, tsv: TSV };

function exportContacts(contacts, format) {
  if (!Object.prototype.hasOwnProperty.call(DIALECTS, format)) throw new Error(`unknown format ${format}`);
  return formatTable(contacts, COLUMNS, DIALECTS[format]);
}

module.exports = { exportContacts, COLUMNS };
