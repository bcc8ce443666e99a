'use strict';

const { Status, transition } = require('./status');

function createOrder(id, items) {
  return { id, items: [...items], status: Status.NEW };
}

function pay(order) {
  return transition(order, Status.PAID);
}

function cancel(order) {
  return transition(order, Status.CANCELLED);
}

module.exports = { createOrder, pay, cancel };
