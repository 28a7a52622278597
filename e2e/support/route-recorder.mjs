// Preloaded into a test system's processes (`NODE_OPTIONS=--import …`, plain JavaScript so that compiled services
// load it too): once a server listens, it writes the routes of the Express app it serves, as `[method, path]` pairs,
// to `$ROUTE_RECORD_DIR/<port>.json`. A test compares them with the operations each service is declared to answer.
import { writeFileSync } from 'node:fs';
import { Server } from 'node:http';
import path from 'node:path';

const directory = process.env.ROUTE_RECORD_DIR;
const listen = Server.prototype.listen;

Server.prototype.listen = function recordRoutes(...args) {
  this.once('listening', () => {
    const [app] = this.listeners('request');
    const address = this.address();
    if (!directory || !app?.router || typeof address !== 'object' || address === null) return;
    writeFileSync(path.join(directory, `${address.port}.json`), JSON.stringify(routesOf(app.router.stack)));
  });
  return listen.apply(this, args);
};

/** Each route of a router, and of the routers mounted in it at its root. */
function routesOf(stack) {
  return stack.flatMap((layer) => {
    if (layer.route) {
      return Object.keys(layer.route.methods).map((method) => [method.toUpperCase(), layer.route.path]);
    }
    if (!Array.isArray(layer.handle?.stack)) return [];
    // A router mounted below the root would prefix its paths with a path this walk does not know.
    if (!layer.slash) return [['MOUNTED', String(layer.regexp ?? layer.matchers)]];
    return routesOf(layer.handle.stack);
  });
}
