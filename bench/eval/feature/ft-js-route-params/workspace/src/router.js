'use strict';

// Routes by method and exact path, tried in the order they were added.
class Router {
  constructor() {
    this.routes = [];
  }

  add(method, path, handler) {
    this.routes.push({ method, path, handler });
    return this;
  }

  // { handler } of the first route for this method and path, or null.
  match(method, path) {
    for (const route of this.routes) {
      if (route.method === method && route.path === path) return { handler: route.handler };
    }
    return null;
  }
}

module.exports = { Router };
