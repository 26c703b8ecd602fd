/**
 * /healthz and /readyz, on the probe listener. They answer on every replica, leader or not: a standby
 * is healthy and ready (its caches are warm), it just does not reconcile.
 */
import { createServer, type Server } from 'node:http';
import { listen, type BindAddress } from './bindAddress.js';

export interface HealthChecks {
  /**
   * Ready = every cache synced and still hearing from the API server; a replica whose watches failed or
   * went silent would otherwise look healthy while blind. `reason` says which cache is not.
   */
  ready(): { ok: boolean; reason: string };
}

/** What readiness reads of one informer. */
export interface CacheHealth {
  resource: string;
  namespace: string;
  synced: boolean;
  /** Wall-clock ms of the last event, bookmark or list; undefined before the first. */
  lastEventAt?: number;
}

/**
 * Ready when every cache has synced and has heard from the API server within `staleAfterMs`. With watch
 * bookmarks (about once a minute) and the watchdog restarting a silent watch after its idle timeout, a
 * healthy cache is never that quiet; one that is has been failing (every restart refused) or cut off.
 * Liveness (/healthz) stays about the process: restarting the pod does not fix an unreachable API server.
 */
export function readiness(caches: readonly CacheHealth[], now: number, staleAfterMs: number): { ok: boolean; reason: string } {
  for (const c of caches) {
    const which = `${c.resource}${c.namespace ? ` in ${c.namespace}` : ''}`;
    if (!c.synced) return { ok: false, reason: `cache of ${which} not synced` };
    if (c.lastEventAt === undefined || now - c.lastEventAt > staleAfterMs) {
      const ago = c.lastEventAt === undefined ? 'never' : `${Math.round((now - c.lastEventAt) / 1000)}s ago`;
      return { ok: false, reason: `cache of ${which} last heard from the API server ${ago} (bound ${Math.round(staleAfterMs / 1000)}s)` };
    }
  }
  return { ok: true, reason: 'ok' };
}

/**
 * The probe listener: /healthz and /readyz, plain HTTP, no credentials (the kubelet presents none).
 * /metrics is not here: it has a listener of its own, which may demand TLS and a token.
 */
export async function startProbeServer(address: BindAddress, checks: HealthChecks): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (url === '/readyz') {
      const r = checks.ready();
      res.writeHead(r.ok ? 200 : 503, { 'content-type': 'text/plain' }).end(`${r.reason}\n`);
    } else {
      res.writeHead(404).end();
    }
  });
  return { server, port: await listen(server, address) };
}
