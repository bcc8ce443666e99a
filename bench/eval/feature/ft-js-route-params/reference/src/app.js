'use strict';

const { Router } = require('./router');

const json = (status, body, headers = {}) => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body,
});

function userId(req) {
  return /^[1-9][0-9]*$/.test(req.params.id) ? Number(req.params.id) : null;
}

function createApp(db) {
  const router = new Router();
  router.add('GET', '/users', () => json(200, db.list()));
  router.add('GET', '/users/:id', (req) => {
    const id = userId(req);
    if (id === null) return json(400, { error: 'bad id' });
    const user = db.get(id);
    return user ? json(200, user) : json(404, { error: 'no such user' });
  });
  router.add('DELETE', '/users/:id', (req) => {
    const id = userId(req);
    if (id === null) return json(400, { error: 'bad id' });
    return db.remove(id) ? json(204, null) : json(404, { error: 'no such user' });
  });

  function handle(method, url) {
    const [path, qs = ''] = url.split('?');
    const found = router.match(method, path);
    if (!found) {
      const allowed = router.allowed(path);
      if (allowed.length) return json(405, { error: 'method not allowed' }, { Allow: allowed.join(', ') });
      return json(404, { error: 'not found' });
    }
    return found.handler({ method, path, params: found.params, query: new URLSearchParams(qs) });
  }

  return { handle, router };
}

module.exports = { createApp };
