import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Express } from 'express';

export interface HttpServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Binds the app; rejects on EADDRINUSE and the like. */
export function listen(app: Express, port: number, host: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = serverFor(app);
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.keepAliveTimeout = 65_000;
      resolve({ server, port: bound, close: () => closeServer(server) });
    });
  });
}

/**
 * An HTTP server whose requests and responses are born with the app's prototypes. Express otherwise moves each one
 * onto them with `Object.setPrototypeOf`, which V8 makes pay on every later property access: measured, that
 * doubled the CPU of a request through the gateway. Given the prototype they already have, the call is a no-op.
 */
function serverFor(app: Express): Server {
  return createServer(
    {
      IncomingMessage: bornWith(IncomingMessage, app.request),
      ServerResponse: bornWith(ServerResponse, app.response),
    },
    app,
  );
}

/** `base`'s constructor, making objects whose prototype is `prototype` (which must inherit from `base`'s). */
function bornWith<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, prototype: object): T {
  function Born(this: InstanceType<T>, ...args: ConstructorParameters<T>) {
    // Node's constructors here are plain functions. Reflect.construct with another new.target would also do,
    // but V8 then builds every request and response several times slower.
    Reflect.apply(base, this, args);
  }
  Born.prototype = prototype;
  return Born as unknown as T;
}

/** Stops accepting connections, lets in-flight requests finish, and cuts idle keep-alive sockets. */
function closeServer(server: Server, graceMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
