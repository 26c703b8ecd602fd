import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ApiClient } from '../../src/k8s/apiClient.js';
import { microTime } from '../../src/api/time.js';
import { LeaderElector } from '../../src/runtime/leaderElection.js';
import type { Lease, LeaseSpec } from '../../src/runtime/leaseRecord.js';
import { FakeClock } from '../support/fakeClock.js';

const NS = 'rg-system';
const NAME = 'rollout-guard';
const COLLECTION = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const ITEM = `${COLLECTION}/${NAME}`;
const MICROTIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

// client-go defaults, as the caller passes them.
const LEASE_MS = 15_000;
const RENEW_MS = 10_000;
const RETRY_MS = 2_000;
const MAX_ACQUIRE_SLEEP = RETRY_MS * 2.2;

function status(code: number, reason: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason });
}

/** An in-memory Lease endpoint with optimistic concurrency and fault knobs. */
class LeaseServer {
  readonly bus = new EventEmitter();
  readonly requests: Array<{ method: string; body?: Lease }> = [];
  lease: Lease | undefined;
  private rv = 1;
  /** Every request answers this status while set. */
  failAll: number | undefined;
  /** Next N PUTs answer 409 regardless of resourceVersion (someone else wrote in between). */
  conflictPuts = 0;
  /** Next POST answers 409 AlreadyExists after letting this spec win the race. */
  raceCreateWith: LeaseSpec | undefined;
  private readonly server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => this.handle(req, raw, res));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Seeds or overwrites the stored lease, as another candidate's write would. */
  write(spec: LeaseSpec): void {
    this.lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: NAME, namespace: NS, resourceVersion: String(++this.rv) },
      spec,
    };
  }

  count(method: string): number {
    return this.requests.filter((r) => r.method === method).length;
  }

  private handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    const body = raw ? (JSON.parse(raw) as Lease) : undefined;
    this.requests.push({ method: req.method ?? '', ...(body ? { body } : {}) });
    const reply = (code: number, payload: string): void => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(payload);
      this.bus.emit('request');
    };
    if (this.failAll !== undefined) return reply(this.failAll, status(this.failAll, 'InternalError'));
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === ITEM) {
      return this.lease ? reply(200, JSON.stringify(this.lease)) : reply(404, status(404, 'NotFound'));
    }
    if (req.method === 'POST' && path === COLLECTION && body) {
      if (this.raceCreateWith) {
        this.write(this.raceCreateWith);
        this.raceCreateWith = undefined;
      }
      if (this.lease) return reply(409, status(409, 'AlreadyExists'));
      this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
      return reply(201, JSON.stringify(this.lease));
    }
    if (req.method === 'PUT' && path === ITEM && body) {
      if (!this.lease) return reply(404, status(404, 'NotFound'));
      if (this.conflictPuts > 0) {
        this.conflictPuts--;
        return reply(409, status(409, 'Conflict'));
      }
      if (body.metadata.resourceVersion !== this.lease.metadata.resourceVersion) return reply(409, status(409, 'Conflict'));
      this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
      return reply(200, JSON.stringify(this.lease));
    }
    reply(405, status(405, 'MethodNotAllowed'));
  }
}

interface Harness {
  server: LeaseServer;
  clock: FakeClock;
  elector: LeaderElector;
  started: Promise<AbortSignal>;
  stoppedLeading: Promise<void>;
  stoppedCalls: number;
  done: Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
const bases = new Map<LeaseServer, string>();
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Starts a server (or reuses `shared`, e.g. for a second candidate) and runs an elector against it. */
async function setup(seed?: (s: LeaseServer) => void, identity = 'me', shared?: { server: LeaseServer; base: string }): Promise<Harness> {
  const server = shared?.server ?? new LeaseServer();
  const base = shared?.base ?? (await server.start());
  seed?.(server);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: base }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const client = ApiClient.fromKubeConfig(kc);
  const clock = new FakeClock(0);
  const wall = new FakeClock(Date.UTC(2026, 10, 29, 16, 32, 51, 123));
  const elector = new LeaderElector({
    client,
    namespace: NS,
    name: NAME,
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    clock,
    wallClock: wall,
    timers: clock,
    logger: pino({ level: 'silent' }),
  });
  let resolveStarted!: (s: AbortSignal) => void;
  let resolveStopped!: () => void;
  const h: Harness = {
    server,
    clock,
    elector,
    started: new Promise((r) => (resolveStarted = r)),
    stoppedLeading: new Promise((r) => (resolveStopped = r)),
    stoppedCalls: 0,
    done: Promise.resolve(),
  };
  h.done = elector.run({
    onStartedLeading: (signal) => resolveStarted(signal),
    onStoppedLeading: () => {
      h.stoppedCalls++;
      resolveStopped();
    },
  });
  cleanups.push(async () => {
    await elector.release();
    await h.done;
    client.close();
    if (!shared) await server.close();
  });
  bases.set(server, base);
  return h;
}

/** Advances fake time by `ms` and waits until the elector has finished its attempt and scheduled its next sleep. */
async function step(
  h: Harness,
  ms: number,
  isSleep: (d: number) => boolean = (d) => d >= RETRY_MS && d <= MAX_ACQUIRE_SLEEP,
): Promise<void> {
  const next = h.clock.nextTimer(isSleep);
  h.clock.advance(ms);
  await next;
}

describe('LeaderElector', { timeout: 10_000 }, () => {
  it('acquires a free (absent) lease by creating it, with MicroTime timestamps', async () => {
    const h = await setup();
    const signal = await h.started;
    assert.equal(h.elector.isLeader(), true);
    assert.equal(signal.aborted, false);
    const spec = h.server.lease!.spec!;
    assert.equal(spec.holderIdentity, 'me');
    assert.equal(spec.leaseDurationSeconds, 15);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(spec.renewTime!, MICROTIME);
    assert.equal(spec.acquireTime, '2026-11-29T16:32:51.123000Z');
  });

  it('waits while another holder is fresh, judged by local time even if its renewTime looks ancient', async () => {
    const h = await setup((s) =>
      s.write({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: '2001-01-01T00:00:00.000000Z', leaseTransitions: 3 }),
    );
    await h.clock.nextTimer(); // first attempt done (GET), sleeping
    for (let i = 1; i <= 3; i++) {
      await step(h, MAX_ACQUIRE_SLEEP); // 13.2 s since we first saw the record: still valid
      assert.equal(h.elector.isLeader(), false);
    }
    assert.equal(h.server.count('PUT'), 0, 'no write while the lease is valid');
    assert.equal(h.server.lease!.spec!.holderIdentity, 'other');

    h.clock.advance(MAX_ACQUIRE_SLEEP); // 17.6 s > 15 s: expired
    await h.started;
    const spec = h.server.lease!.spec!;
    assert.equal(spec.holderIdentity, 'me');
    assert.equal(spec.leaseTransitions, 4, 'a takeover counts as a transition');
    assert.equal(spec.acquireTime, spec.renewTime);
  });

  it('a holder that keeps renewing keeps us out; we take over only a lease-duration after its last renewal', async () => {
    let n = 0;
    const renewByOther = (s: LeaseServer): void =>
      s.write({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: microTime(Date.UTC(2001, 0, 1) + ++n), leaseTransitions: 0 });
    const h = await setup(renewByOther);
    await h.clock.nextTimer();
    for (let i = 0; i < 6; i++) {
      renewByOther(h.server);
      await step(h, MAX_ACQUIRE_SLEEP);
    }
    assert.equal(h.elector.isLeader(), false, '26 s of live renewals: never taken over');
    // The last renewal was seen at the last GET; the holder now stops.
    await step(h, MAX_ACQUIRE_SLEEP); // 4.4 s
    await step(h, MAX_ACQUIRE_SLEEP); // 8.8 s
    await step(h, MAX_ACQUIRE_SLEEP); // 13.2 s
    assert.equal(h.elector.isLeader(), false);
    h.clock.advance(MAX_ACQUIRE_SLEEP); // 17.6 s
    await h.started;
    assert.equal(h.server.lease!.spec!.holderIdentity, 'me');
  });

  it('renews every retry period while leading, keeping acquireTime', async () => {
    const h = await setup();
    await h.started;
    const acquired = h.server.lease!.spec!.acquireTime;
    const rv = h.server.lease!.metadata.resourceVersion;
    // The renew loop's first sleep is already scheduled; each step is one renewal.
    await step(h, RETRY_MS, (d) => d === RETRY_MS);
    await step(h, RETRY_MS, (d) => d === RETRY_MS);
    assert.notEqual(h.server.lease!.metadata.resourceVersion, rv);
    assert.equal(h.server.lease!.spec!.acquireTime, acquired);
    assert.equal(h.server.lease!.spec!.leaseTransitions, 0);
    assert.equal(h.server.count('GET'), 1, 'renewals use the cached object (no GET) while all is well');
  });

  it('loses leadership when renewals keep failing past the renew deadline', async () => {
    const h = await setup();
    const signal = await h.started; // the renew loop's first sleep is already scheduled
    h.server.failAll = 500;
    const t0 = h.clock.now();
    // Round starts at t0+2 s with a 10 s deadline; attempts at +2, +4, +6, +8, +10 all fail.
    for (let i = 0; i < 5; i++) {
      await step(h, RETRY_MS, (d) => d === RETRY_MS);
      assert.equal(h.elector.isLeader(), true, `still leader at +${h.clock.now() - t0} ms, before the deadline`);
    }
    h.clock.advance(RETRY_MS); // +12 s: the round's deadline passes
    await h.stoppedLeading;
    await h.done;
    assert.equal(h.elector.isLeader(), false);
    assert.equal(signal.aborted, true);
    assert.equal(h.stoppedCalls, 1);
  });

  it('a renewal that recovers before the deadline keeps leadership', async () => {
    const h = await setup();
    await h.started;
    h.server.failAll = 503;
    await step(h, RETRY_MS, (d) => d === RETRY_MS); // +2 s fails
    await step(h, RETRY_MS, (d) => d === RETRY_MS); // +4 s fails
    h.server.failAll = undefined;
    await step(h, RETRY_MS, (d) => d === RETRY_MS); // +6 s succeeds
    for (let i = 0; i < 6; i++) await step(h, RETRY_MS, (d) => d === RETRY_MS); // +18 s: well past the old deadline
    assert.equal(h.elector.isLeader(), true);
    assert.equal(h.stoppedCalls, 0);
  });

  it('a pause past the lease (time jumps, no timer ran): stillLeading() is false at once and the loss is reported once', async () => {
    const h = await setup();
    const signal = await h.started;
    assert.equal(h.elector.stillLeading(), true);
    const sent = h.server.requests.length;
    h.clock.set(h.clock.now() + LEASE_MS); // SIGSTOP for a lease duration: the clock moved, nothing ran
    assert.equal(h.elector.stillLeading(), false, 'another candidate may lead by now');
    assert.equal(h.elector.isLeader(), false);
    assert.equal(signal.aborted, true);
    assert.equal(h.stoppedCalls, 1);
    assert.equal(h.elector.stillLeading(), false);
    h.clock.advance(RETRY_MS); // the overdue renew timer fires: the loop ends without writing
    await h.done;
    assert.equal(h.stoppedCalls, 1, 'reported once');
    assert.equal(h.server.requests.length, sent, 'no request after waking');
  });

  it('just under a lease duration since the last renewal still leads', async () => {
    const h = await setup();
    await h.started;
    h.clock.set(h.clock.now() + LEASE_MS - 1);
    assert.equal(h.elector.stillLeading(), true);
    assert.equal(h.stoppedCalls, 0);
  });

  it('another holder in the Lease ends leadership at the next renewal, without waiting for the renew deadline', async () => {
    const h = await setup();
    const signal = await h.started;
    h.server.write({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 1 });
    h.clock.advance(RETRY_MS); // one renewal: the PUT conflicts, the GET shows the new holder
    await h.stoppedLeading;
    await h.done;
    assert.equal(signal.aborted, true);
    assert.equal(h.stoppedCalls, 1);
    assert.equal(h.server.lease!.spec!.holderIdentity, 'other', 'never overwritten');
  });

  it('release() clears the holder so a successor need not wait; onStoppedLeading is not called', async () => {
    const h = await setup();
    const signal = await h.started;
    await h.elector.release();
    await h.done;
    assert.equal(signal.aborted, true);
    assert.equal(h.elector.isLeader(), false);
    assert.equal(h.stoppedCalls, 0);
    const spec = h.server.lease!.spec!;
    assert.equal(spec.holderIdentity, '');
    assert.equal(spec.leaseDurationSeconds, 1);
    assert.equal(spec.leaseTransitions, 0);

    // A second candidate on the same server takes over on its first attempt, with no time passing.
    const next = await setup(undefined, 'successor', { server: h.server, base: bases.get(h.server)! });
    await next.started;
    assert.equal(h.server.lease!.spec!.holderIdentity, 'successor');
    assert.equal(h.server.lease!.spec!.leaseTransitions, 1);
  });

  it('409 on takeover: not leader this round, wins on the next', async () => {
    const h = await setup((s) => {
      s.write({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 });
      s.conflictPuts = 1;
    });
    await h.clock.nextTimer();
    assert.equal(h.elector.isLeader(), false);
    assert.equal(h.server.count('PUT'), 1);
    h.clock.advance(MAX_ACQUIRE_SLEEP);
    await h.started;
    assert.equal(h.server.lease!.spec!.holderIdentity, 'me');
    assert.equal(h.server.lease!.spec!.leaseTransitions, 3);
  });

  it('409 on create (another candidate created it first): waits for that holder', async () => {
    const h = await setup((s) => {
      s.raceCreateWith = { holderIdentity: 'fast', leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 0 };
    });
    await h.clock.nextTimer();
    assert.equal(h.elector.isLeader(), false);
    await step(h, MAX_ACQUIRE_SLEEP);
    assert.equal(h.elector.isLeader(), false);
    assert.equal(h.server.lease!.spec!.holderIdentity, 'fast');
    assert.equal(h.server.count('PUT'), 0);
  });
});

describe('microTime', () => {
  const cases: Array<[number, string]> = [
    [Date.UTC(2026, 10, 29, 16, 32, 51, 123), '2026-11-29T16:32:51.123000Z'],
    [Date.UTC(2026, 0, 1) + 0.5, '2026-01-01T00:00:00.000500Z'],
    [0, '1970-01-01T00:00:00.000000Z'],
  ];
  for (const [ms, want] of cases) it(`${ms} → ${want}`, () => assert.equal(microTime(ms), want));
});

describe('LeaderElector options', () => {
  const base = { client: {} as ApiClient, namespace: NS, name: NAME, identity: 'me', logger: pino({ level: 'silent' }) };
  const cases: Array<[string, { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number; identity?: string }]> = [
    ['lease not longer than renew deadline', { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }],
    ['renew deadline not above 1.2 × retry', { leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }],
    ['zero retry', { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 0 }],
    ['empty identity', { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, identity: '' }],
  ];
  for (const [name, o] of cases) it(`rejects ${name}`, () => assert.throws(() => new LeaderElector({ ...base, ...o })));
});
