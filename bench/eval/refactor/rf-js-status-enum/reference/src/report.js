'use strict';

const { Status, isOpen } = require('./status');

// How many orders are in each status (every status present, zero or more).
function countByStatus(orders) {
  const counts = {};
  for (const status of Object.values(Status)) counts[status] = 0;
  for (const order of orders) counts[order.status] += 1;
  return counts;
}

// The orders still in progress: neither delivered nor cancelled.
function openOrders(orders) {
  return orders.filter((o) => isOpen(o.status));
}

module.exports = { countByStatus, openOrders };
