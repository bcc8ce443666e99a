const assert = require('node:assert/strict');
const { createOrder, pay } = require('../src/orders');
const { ship } = require('../src/shipping');

test('an order is paid, then shipped', () => {
  const order = ship(pay(createOrder(1, ['pen'])), 'post');
  assert.equal(order.status, 'shipped');
});
