'use strict';

const Status = Object.freeze({
  NEW: 'new',
  PAID: 'paid',
  SHIPPED: 'shipped',
  DELIVERED: 'delivered',
  CANCELLED: 'cancelled',
});

const NEXT = Object.freeze({
  [Status.NEW]: [Status.PAID, Status.CANCELLED],
  [Status.PAID]: [Status.SHIPPED, Status.CANCELLED],
  [Status.SHIPPED]: [Status.DELIVERED],
  [Status.DELIVERED]: [],
  [Status.CANCELLED]: [],
});

function canTransition(from, to) {
  return Object.prototype.hasOwnProperty.call(NEXT, from) && NEXT[from].includes(to);
}

function transition(order, to) {
  if (!canTransition(order.status, to)) {
    throw new Error(`order ${order.id}: cannot go from ${order.status} to ${to}`);
  }
  order.status = to;
  return order;
}

function isOpen(status) {
  return status !== Status.DELIVERED && status !== Status.CANCELLED;
}

module.exports = { Status, canTransition, transition, isOpen };
