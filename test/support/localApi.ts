/**
 * An ApiClient against a small local HTTP server standing in for the API server, for the unit suites in
 * test/k8s that check what the client sends and how it reads answers (clockSkew, metricsAuth,
 * daemonSetUndo). They need the real ApiClient, built the way the operator builds it (from a KubeConfig),
 * but no cluster: a plain-HTTP cluster entry on 127.0.0.1 with an anonymous user is enough.
 */
import type http from 'node:http';
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
