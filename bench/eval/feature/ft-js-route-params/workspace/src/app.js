'use strict';

const { Router } = require('./router');

const json = (status, body, headers = {}) => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body,
});

function createApp(db) {
  const router = new Router();
  router.add('GET', '/users', () => json(200, db.list()));

  function handle(method, url) {
    const [path, qs = ''] = url.split('?');
    const found = router.match(method, path);
    if (!found) return json(404, { error: 'not found' });
    return found.handler({ method, path, query: new URLSearchParams(qs) });
  }

  return { handle, router };
}

module.exports = { createApp };
