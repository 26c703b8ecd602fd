/**
 * The dashboard's server against a fixed feed, over real HTTP on loopback: GET alone, its own files by
 * their exact path, JSON, server-sent event streams that leave their watch when the browser goes, and
 * the Host check against DNS rebinding.
 */
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../cluster/wait.js';
import { DEFAULT_ADDRESS, allowedHost, startServer } from '../../src/cli/dashboardServer.js';
import { FixedFeed, bigDetail } from '../support/dashboardFixtures.js';

/** A raw GET (fetch cannot set Host): status, headers and body. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
      })
      .on('error', reject);
  });
}

/** Reads a server-sent event stream until `n` events arrived, then closes it. */
function events(url: string, n: number): Promise<Array<{ event: string; data: unknown }>> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let buf = '';
      const out: Array<{ event: string; data: unknown }> = [];
      res.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) out.push({ event, data: JSON.parse(data) });
          if (out.length === n) {
            req.destroy();
            resolve(out);
          }
        }
      });
    });
    req.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
  });
}

describe('the dashboard server', () => {
  let dir: string;
  let url: string;
  let close: () => Promise<void>;
  const feed = new FixedFeed(bigDetail(3));

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rg-dash-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), '<div id="app"></div>');
    await writeFile(path.join(dir, 'assets', 'index-1.js'), 'console.log(1)');
    await writeFile(path.join(dir, '..', `${path.basename(dir)}-secret.txt`), 'secret');
    const s = await startServer(feed, { address: DEFAULT_ADDRESS, port: 0, staticDir: dir });
    url = s.url;
    close = s.close;
  });
  after(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
    await rm(path.join(dir, '..', `${path.basename(dir)}-secret.txt`), { force: true });
  });

  it('listens on 127.0.0.1 by default', () => {
    assert.equal(DEFAULT_ADDRESS, '127.0.0.1');
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'])
    it(`refuses ${method} with 405 and Allow: GET`, async () => {
      const r = await fetch(`${url}api/guards`, { method });
      assert.equal(r.status, 405);
      assert.equal(r.headers.get('allow'), 'GET');
    });

  it('serves its page and its assets by their exact paths, with a content security policy', async () => {
    const r = await fetch(url);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal((await get(`${url}assets/index-1.js`)).type, 'text/javascript; charset=utf-8');
  });

  const notServed: Array<[string, () => string]> = [
    ['a path out of the directory', () => `../${path.basename(dir)}-secret.txt`],
    ['an encoded path out of the directory', () => `%2e%2e/${path.basename(dir)}-secret.txt`],
    ['a file that does not exist', () => 'assets/nothing.js'],
    ['an API path of no guard', () => 'api/guards/Not_A_Name/x'],
  ];
  for (const [what, p] of notServed) it(`404 for ${what}`, async () => assert.equal((await get(`${url}${p()}`)).status, 404));

  it('answers the list and a guard as JSON', async () => {
    const list = (await (await fetch(`${url}api/guards`)).json()) as { guards: Array<{ name: string }> };
    assert.deepEqual(
      list.guards.map((g) => g.name),
      ['decoder'],
    );
    const one = (await (await fetch(`${url}api/guards/bench/decoder`)).json()) as { cells: unknown[] };
    assert.equal(one.cells.length, 3);
    assert.equal(feed.viewers, 0, 'a one-time answer leaves the watch at once');
  });

  it('streams the list, and a guard until the browser goes', async () => {
    const [l] = await events(`${url}api/stream`, 1);
    assert.equal(l?.event, 'list');
    const pushed = events(`${url}api/stream/bench/decoder`, 2);
    await waitFor(() => feed.viewers === 1, { timeoutMs: 5000, intervalMs: 10, describe: 'the stream subscribed to the guard' });
    feed.push({ ...feed.detail, state: 'RolledBack' });
    const got = await pushed;
    assert.deepEqual(
      got.map((e) => [e.event, (e.data as { state: string }).state]),
      [
        ['guard', 'Stalled'],
        ['guard', 'RolledBack'],
      ],
    );
    await waitFor(() => feed.viewers === 0, { timeoutMs: 5000, intervalMs: 10, describe: 'the watch left with the browser' });
  });

  it('refuses a Host it does not listen on (DNS rebinding) with 403', async () => {
    assert.equal((await get(`${url}api/guards`, { host: 'attacker.example' })).status, 403);
  });
});

describe('allowedHost', () => {
  const cases: Array<[string | undefined, string, boolean]> = [
    ['127.0.0.1:3200', '127.0.0.1', true],
    ['localhost:3200', '127.0.0.1', true],
    ['[::1]:3200', '127.0.0.1', true],
    ['127.0.0.1:3201', '127.0.0.1', false],
    ['evil.example:3200', '127.0.0.1', false],
    [undefined, '127.0.0.1', false],
    ['10.0.0.5:3200', '10.0.0.5', true],
    ['localhost:3200', '10.0.0.5', false],
    ['anything:3200', '0.0.0.0', true],
  ];
  for (const [host, address, want] of cases)
    it(`${host} on ${address}: ${want}`, () => assert.equal(allowedHost(host, address, 3200), want));
});
