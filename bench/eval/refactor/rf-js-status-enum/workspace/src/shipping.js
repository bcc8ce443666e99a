'use strict';

function ship(order, carrier) {
  if (order.status !== 'paid') {
    throw new Error(`order ${order.id}: cannot go from ${order.status} to shipped`);
  }
  order.status = 'shipped';
  order.carrier = carrier;
  return order;
}

function deliver(order) {
  if (order.status !== 'shipped') {
    throw new Error(`order ${order.id}: cannot go from ${order.status} to delivered`);
  }
  order.status = 'delivered';
  return order;
}

module.exports = { ship, deliver };
