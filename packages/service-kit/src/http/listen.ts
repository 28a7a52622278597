import type { Server } from 'node:http';
import type { Express } from 'express';

export interface HttpServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Binds the app; rejects on EADDRINUSE (Express 5 calls the listen callback even when binding fails). */
export function listen(app: Express, port: number, host: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (error?: Error) => {
      if (error) return reject(error);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.keepAliveTimeout = 65_000;
      resolve({ server, port: bound, close: () => closeServer(server) });
    });
  });
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
