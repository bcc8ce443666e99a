'use strict';

// How many orders are in each status (every status present, zero or more).
function countByStatus(orders) {
  const counts = { new: 0, paid: 0, shipped: 0, delivered: 0, cancelled: 0 };
  for (const order of orders) counts[order.status] += 1;
  return counts;
}

// The orders still in progress: neither delivered nor cancelled.
function openOrders(orders) {
  return orders.filter((o) => o.status !== 'delivered' && o.status !== 'cancelled');
}

module.exports = { countByStatus, openOrders };
