'use strict';

function createOrder(id, items) {
  return { id, items: [...items], status: 'new' };
}

function pay(order) {
  if (order.status !== 'new') {
    throw new Error(`order ${order.id}: cannot go from ${order.status} to paid`);
  }
  order.status = 'paid';
  return order;
}

function cancel(order) {
  if (order.status !== 'new' && order.status !== 'paid') {
    throw new Error(`order ${order.id}: cannot go from ${order.status} to cancelled`);
  }
  order.status = 'cancelled';
  return order;
}

module.exports = { createOrder, pay, cancel };
