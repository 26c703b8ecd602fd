/**
 * A GET for the components' health endpoints, all on loopback.
 *
 * @module
 */
import * as http from 'node:http';
import * as https from 'node:https';

/** GETs `url` (2 s timeout), accepting any serving certificate; resolves with the status and body. */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    // Self-signed serving certs everywhere; this only ever talks to 127.0.0.1.
    const req = mod.get(url, { headers, rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}
