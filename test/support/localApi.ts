/**
 * An ApiClient against a small local HTTP server standing in for the API server, for the unit suites in
 * test/k8s that check what the client sends and how it reads answers (clockSkew, metricsAuth,
 * daemonSetUndo). They need the real ApiClient, built the way the operator builds it (from a KubeConfig),
 * but no cluster: a plain-HTTP cluster entry on 127.0.0.1 with an anonymous user is enough.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient, type ApiClientOptions } from '../../src/k8s/apiClient.js';

/** Starts `server` on a port the kernel picks on 127.0.0.1 (so concurrent suites never collide). */
export function listenLocal(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}

/**
 * A KubeConfig whose current context points at `server` (already listening on 127.0.0.1) over plain HTTP
 * with no credentials: the fake server authenticates nothing, and no TLS setup is needed to reach it.
 */
export function localKubeConfig(server: http.Server): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** The operator's ApiClient, built through `ApiClient.fromKubeConfig` as in production, talking to `server`. */
export function clientFor(server: http.Server, opts?: ApiClientOptions): ApiClient {
  return ApiClient.fromKubeConfig(localKubeConfig(server), opts);
}

/** A local API server whose lists answer from a function and whose watches stay open and silent. */
export interface QuietApi {
  server: http.Server;
  /** Ends the held watches and closes the server. */
  close(): Promise<void>;
}

/**
 * Starts a local API server that answers every list with the items `itemsOf` gives for its URL (at
 * resourceVersion 7) and holds every watch open without an event: caches list once and then hear nothing.
 */
export async function quietApi(itemsOf: (url: URL) => unknown[] = () => []): Promise<QuietApi> {
  const open: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    const watch = url.searchParams.get('watch');
    if (watch === 'true' || watch === '1') {
      open.push(res);
      return;
    }
    res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '7' }, items: itemsOf(url) }));
  });
  await listenLocal(server);
  return {
    server,
    close: async () => {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
