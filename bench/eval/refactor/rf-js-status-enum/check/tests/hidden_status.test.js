const assert = require('node:assert/strict');
const { Status, canTransition, transition, isOpen } = require('../src/status');
const { createOrder, pay, cancel } = require('../src/orders');
const { ship, deliver } = require('../src/shipping');
const { countByStatus, openOrders } = require('../src/report');

const ALL = ['new', 'paid', 'shipped', 'delivered', 'cancelled'];
const ALLOWED = ['new>paid', 'new>cancelled', 'paid>shipped', 'paid>cancelled', 'shipped>delivered'];

test('Status is a frozen enum of the five statuses', () => {
  assert.deepEqual({ ...Status }, { NEW: 'new', PAID: 'paid', SHIPPED: 'shipped', DELIVERED: 'delivered', CANCELLED: 'cancelled' });
  assert.ok(Object.isFrozen(Status));
});

test('canTransition, transition and isOpen hold the rules', () => {
  for (const from of ALL) {
    for (const to of ALL) {
      assert.equal(canTransition(from, to), ALLOWED.includes(`${from}>${to}`), `${from} -> ${to}`);
    }
  }
  assert.equal(canTransition('bogus', 'paid'), false);
  assert.equal(canTransition('new', 'bogus'), false);
  assert.equal(canTransition('toString', 'paid'), false);
  const order = { id: 7, status: Status.PAID };
  assert.equal(transition(order, Status.SHIPPED), order);
  assert.equal(order.status, 'shipped');
  assert.throws(() => transition(order, Status.PAID), { message: 'order 7: cannot go from shipped to paid' });
  assert.equal(order.status, 'shipped');
  assert.deepEqual(ALL.filter(isOpen), ['new', 'paid', 'shipped']);
});

test('orders and shipping keep their behaviour', () => {
  const a = createOrder(1, ['pen']);
  assert.deepEqual(a, { id: 1, items: ['pen'], status: 'new' });
  assert.throws(() => ship(a, 'post'), { message: 'order 1: cannot go from new to shipped' });
  assert.equal(pay(a), a);
  assert.throws(() => pay(a), { message: 'order 1: cannot go from paid to paid' });
  assert.equal(ship(a, 'post'), a);
  assert.equal(a.carrier, 'post');
  assert.throws(() => cancel(a), { message: 'order 1: cannot go from shipped to cancelled' });
  assert.equal(deliver(a).status, 'delivered');
  assert.throws(() => deliver(a), { message: 'order 1: cannot go from delivered to delivered' });
  const b = cancel(pay(createOrder(2, [])));
  assert.equal(b.status, Status.CANCELLED);
  assert.throws(() => pay(b), { message: 'order 2: cannot go from cancelled to paid' });
  assert.equal(cancel(createOrder(3, [])).status, 'cancelled');
});

test('reports count and filter by status', () => {
  const orders = [
    createOrder(1, []),
    pay(createOrder(2, [])),
    ship(pay(createOrder(3, [])), 'van'),
    deliver(ship(pay(createOrder(4, [])), 'van')),
    cancel(createOrder(5, [])),
    pay(createOrder(6, [])),
  ];
  assert.deepEqual(countByStatus(orders), { new: 1, paid: 2, shipped: 1, delivered: 1, cancelled: 1 });
  assert.deepEqual(countByStatus([]), { new: 0, paid: 0, shipped: 0, delivered: 0, cancelled: 0 });
  assert.deepEqual(openOrders(orders).map((o) => o.id), [1, 2, 3, 6]);
});
