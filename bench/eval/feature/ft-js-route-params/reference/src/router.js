'use strict';

// Routes by method and path, tried in the order they were added. A path segment `:name`
// matches any one non-empty segment, captured (URI-decoded) as params.name.
class Router {
  constructor() {
    this.routes = [];
  }

  add(method, path, handler) {
    this.routes.push({ method, path, handler, parts: path.split('/') });
    return this;
  }

  static capture(route, path) {
    const parts = path.split('/');
    if (parts.length !== route.parts.length) return null;
    const params = {};
    for (let i = 0; i < parts.length; i += 1) {
      const want = route.parts[i];
      if (want.startsWith(':')) {
        if (parts[i] === '') return null;
        params[want.slice(1)] = decodeURIComponent(parts[i]);
      } else if (want !== parts[i]) {
        return null;
      }
    }
    return params;
  }

  // { handler, params } of the first route for this method and path, or null.
  match(method, path) {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const params = Router.capture(route, path);
      if (params) return { handler: route.handler, params };
    }
    return null;
  }

  // The methods of the routes matching the path, in the order added, without repeats.
  allowed(path) {
    const methods = [];
    for (const route of this.routes) {
      if (Router.capture(route, path) && !methods.includes(route.method)) methods.push(route.method);
    }
    return methods;
  }
}

module.exports = { Router };
