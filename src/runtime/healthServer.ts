/**
 * /healthz, /readyz and /metrics on one port. It runs on every replica, leader or not: a standby is
 * healthy and ready (its caches are warm), it just does not reconcile.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Metrics } from './metrics.js';

export interface HealthChecks {
  /** Ready = caches synced; a replica that cannot list would otherwise look healthy while blind. */
  ready(): boolean;
}

export function startHealthServer(port: number, metrics: Metrics, checks: HealthChecks, log: Logger): Promise<Server> {
  const server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (url === '/readyz') {
      const ok = checks.ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'caches not synced\n');
    } else if (url === '/metrics') {
      metrics.registry
        .metrics()
        .then((body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body))
        .catch((err: unknown) => {
          log.warn({ err }, 'metrics rendering failed');
          res.writeHead(500).end();
        });
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
