/**
 * The dashboard's HTTP server: its own static files (the page vite built into dist/dashboard/) and
 * JSON, read-only, by GET alone; every other method is refused with 405. Live changes reach browsers
 * as server-sent events, pushed from the hub's shared watches, so no browser polls.
 *
 * ```
 *   GET /                         the page (index.html)          GET /assets/…    its scripts and styles
 *   GET /api/guards               the list, once                 GET /api/guards/NS/NAME   a guard, once
 *   GET /api/stream               the list, then every change (text/event-stream, event `list`)
 *   GET /api/stream/NS/NAME       a guard, then every change (event `guard`)
 * ```
 *
 * It listens on 127.0.0.1 unless told otherwise, and answers only requests whose Host names the address
 * it listens on (or localhost): a web page elsewhere cannot reach it by a DNS name it rebinds to
 * 127.0.0.1. Only files found in the static directory at start are served, by their exact path.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, relative, sep } from 'node:path';
import type { DashboardFeed } from './dashboardHub.js';

/** Where the server listens and what it serves. */
export interface ServerOptions {
  /** Default {@link DEFAULT_ADDRESS}. */
  address: string;
  /** 0: any free port. */
  port: number;
  /** The built page (dist/dashboard/). */
  staticDir: string;
}

/** Loopback only: the dashboard shows what the user's kubeconfig may read, to this machine alone. */
export const DEFAULT_ADDRESS = '127.0.0.1';
/** Beside Argo Rollouts' dashboard (3100), and out of the way of the usual development servers. */
export const DEFAULT_PORT = 3200;
/** A comment line on every stream this often, so proxies and browsers keep an idle stream open. */
export const HEARTBEAT_MS = 15_000;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** Every header of every answer: nothing loaded from elsewhere, no framing, no sniffing. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** The files under `dir`, by URL path (`/assets/index-abc.js`), read once at start; `/` is index.html. */
export function staticFiles(dir: string): Map<string, { body: Buffer; type: string }> {
  const out = new Map<string, { body: Buffer; type: string }>();
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else
        out.set(`/${relative(dir, p).split(sep).join('/')}`, {
          body: readFileSync(p),
          type: TYPES[extname(p)] ?? 'application/octet-stream',
        });
    }
  };
  walk(dir);
  const index = out.get('/index.html');
  if (index) out.set('/', index);
  return out;
}

/** The hosts a request may name: the address listened on, and the loopback names when it is loopback. */
export function allowedHost(host: string | undefined, address: string, port: number): boolean {
  if (!host) return false;
  if (address === '0.0.0.0' || address === '::') return true;
  const loopback = ['127.0.0.1', 'localhost', '[::1]'];
  const names = address === '127.0.0.1' || address === '::1' || address === 'localhost' ? [...loopback, address] : [address];
  return names.some((n) => host === `${n}:${port}` || host === `[${n}]:${port}`);
}

function send(res: http.ServerResponse, code: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(code, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...extra });
  res.end(body);
}

const json = (res: http.ServerResponse, v: unknown): void => send(res, 200, 'application/json; charset=utf-8', JSON.stringify(v));

/** Opens a server-sent event stream on `res`; returns how to push one event, and closes with the request. */
function stream(req: http.IncomingMessage, res: http.ServerResponse, onClose: () => void): (event: string, data: unknown) => void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write('retry: 2000\n\n');
  const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  req.on('close', () => {
    clearInterval(beat);
    onClose();
  });
  return (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** `/api/…/NS/NAME` → namespace and name, each a DNS label or subdomain. */
function guardOf(rest: string): { namespace: string; name: string } | undefined {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(rest);
  return m ? { namespace: m[1]!, name: m[3]! } : undefined;
}

/** Answers the API paths; false when `path` is not one. */
function api(req: http.IncomingMessage, res: http.ServerResponse, path: string, feed: DashboardFeed): boolean {
  if (path === '/api/guards') {
    json(res, feed.list());
    return true;
  }
  if (path === '/api/stream') {
    const push = stream(req, res, () => stop());
    const stop = feed.watchList((l) => push('list', l));
    return true;
  }
  const one = path.startsWith('/api/guards/') ? guardOf(path.slice('/api/guards/'.length)) : undefined;
  if (one) {
    // The answer is sent from the callbacks; a failure answers 500 there, so nothing is left to await.
    void feed
      .watchGuard(one.namespace, one.name, (d) => {
        // The first detail answers; the watch is left at once (shared watches stay for their other viewers).
        if (!res.headersSent) json(res, d);
      })
      .then(
        async (leave) => {
          await leave();
          if (!res.headersSent) send(res, 503, 'text/plain; charset=utf-8', 'no detail yet: try again\n');
        },
        (e: unknown) => send(res, 500, 'text/plain; charset=utf-8', String(e)),
      );
    return true;
  }
  const watched = path.startsWith('/api/stream/') ? guardOf(path.slice('/api/stream/'.length)) : undefined;
  if (watched) {
    let leave: (() => Promise<void>) | undefined;
    let closed = false;
    const push = stream(req, res, () => {
      closed = true;
      // Leaving only stops a watch no other browser shares; the response is already over.
      void leave?.();
    });
    // Details are pushed from the callback; a failure is pushed as an event, so nothing is left to await.
    void feed
      .watchGuard(watched.namespace, watched.name, (d) => push('guard', d))
      .then(
        (l) => {
          leave = l;
          // The browser may have gone while the watch opened.
          if (closed) void l(); // as on close, above
        },
        (e: unknown) => push('failure', { message: String(e) }),
      );
    return true;
  }
  return false;
}

/** Starts the server; resolves once it listens, with its URL and how to close it (open streams included). */
export async function startServer(
  feed: DashboardFeed,
  opts: ServerOptions,
): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const files = staticFiles(opts.staticDir);
  let port = opts.port;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET') {
      send(res, 405, 'text/plain; charset=utf-8', 'read-only: only GET is served\n', { allow: 'GET' });
      return;
    }
    if (!allowedHost(req.headers.host, opts.address, port)) {
      send(res, 403, 'text/plain; charset=utf-8', 'unexpected Host header\n');
      return;
    }
    const path = new URL(req.url ?? '/', 'http://dashboard').pathname;
    if (path.startsWith('/api/') && api(req, res, path, feed)) return;
    const file = files.get(path);
    if (file) {
      send(res, 200, file.type, file.body, { 'cache-control': path.startsWith('/assets/') ? 'max-age=31536000, immutable' : 'no-store' });
      return;
    }
    if (path === '/')
      send(res, 503, 'text/plain; charset=utf-8', `the page is not built: run npm run build (looked in ${opts.staticDir})\n`);
    else send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  return {
    url: `http://${host}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
