'use strict';

const { Status, transition } = require('./status');

function ship(order, carrier) {
  transition(order, Status.SHIPPED);
  order.carrier = carrier;
  return order;
}

function deliver(order) {
  return transition(order, Status.DELIVERED);
}

module.exports = { ship, deliver };
