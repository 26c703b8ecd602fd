/**
 * The metrics listener: /metrics only. Plain HTTP by default; with `--metrics-secure`, HTTPS with the
 * certificate from `--metrics-cert-dir`, and every request must carry a bearer token that the API
 * server authenticates and authorizes (see metricsAuth.ts). Like the probes, it answers on every
 * replica: a standby's informer and process metrics are worth scraping too.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { listen, type BindAddress } from './bindAddress.js';
import { UsageError } from './config.js';
import type { Metrics } from './metrics.js';
import type { MetricsAuthFilter } from './metricsAuth.js';

/** A serving key pair, PEM. */
export interface ServingCert {
  cert: Buffer;
  key: Buffer;
}

export interface MetricsServerOptions {
  address: BindAddress;
  metrics: Metrics;
  log: Logger;
  /** Serve HTTPS with this key pair; plain HTTP without it. */
  tls?: ServingCert;
  /** Decide each request's credentials before rendering; without it anyone who connects may read. */
  auth?: MetricsAuthFilter;
}

/** The file names cert-manager and kubebuilder's scaffolding put in a TLS Secret. */
export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/**
 * Reads tls.crt and tls.key from `dir` and checks that they form a key pair, so that a missing or
 * mismatched Secret stops the operator at start with one sentence rather than failing every scrape.
 * They are read once: a rotated certificate takes effect when the pod restarts.
 */
export async function loadServingCert(dir: string): Promise<ServingCert> {
  const read = async (name: string): Promise<Buffer> => {
    try {
      return await readFile(join(dir, name));
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as Error).message})`;
      throw new UsageError(
        `--metrics-secure: ${join(dir, name)} ${why}; --metrics-cert-dir must hold ${CERT_FILE} and ${KEY_FILE} (no certificate is generated)`,
      );
    }
  };
  const pair = { cert: await read(CERT_FILE), key: await read(KEY_FILE) };
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new UsageError(`--metrics-secure: ${CERT_FILE} and ${KEY_FILE} in ${dir} are not a usable key pair (${(e as Error).message})`);
  }
  return pair;
}

export async function startMetricsServer(o: MetricsServerOptions): Promise<{ server: Server; port: number }> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    serve(o, req, res).catch((err: unknown) => {
      o.log.warn({ err }, 'metrics request failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
  const server = o.tls ? createHttpsServer({ cert: o.tls.cert, key: o.tls.key }, handler) : createHttpServer(handler);
  return { server, port: await listen(server, o.address) };
}

async function serve(o: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = (req.url ?? '/').split('?')[0];
  // Other paths and methods are refused before any review: they serve nothing, so there is nothing to
  // protect, and no API call is spent on them.
  if (url !== '/metrics') {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  if (o.auth) {
    const d = await o.auth.check(req.headers.authorization);
    if (d.status === 401) {
      o.log.debug({ reason: d.reason }, 'metrics: unauthenticated request refused');
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="rollout-guard metrics"' })
        .end('Unauthorized\n');
      return;
    }
    if (d.status === 403) {
      o.log.debug({ user: d.user, reason: d.reason }, 'metrics: request refused by authorization');
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`Forbidden: user ${JSON.stringify(d.user)} may not get /metrics\n`);
      return;
    }
    if (d.status === 503) {
      o.log.warn({ reason: d.reason }, 'metrics: could not review a request');
      res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable: the API server could not review the token\n');
      return;
    }
  }
  const body = await o.metrics.registry.metrics();
  res.writeHead(200, { 'content-type': o.metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
}
