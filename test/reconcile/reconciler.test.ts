/**
 * The reconcile pass against an in-memory API port that records every intended write: the order of
 * intent → undo → outcome, conflict handling, and "no change, no write".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { CACHE_WAIT_LIMIT_MS } from '../../src/domain/decide/settle.js';
import type { Announcement, GuardStatus, TargetKind } from '../../src/api/types.js';
import type { DryRunOutcome, UndoOutcome } from '../../src/domain/undo.js';
import type { EvictionOutcome } from '../../src/domain/eviction.js';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { mergePatchDiff } from '../../src/api/mergePatch.js';
import { classify, deadlineOf } from '../../src/reconcile/errors.js';
import type { UndoRequest } from '../../src/domain/undo.js';
import type { SlimDaemonSet, SlimGuard, SlimNode, SlimPod, SlimRevision, SlimWorkloads } from '../../src/api/objects.js';
import type { CacheView, FailureSighting, ReconcilerPorts } from '../../src/reconcile/ports.js';
import { CACHE_RELIST_AFTER_MS } from '../../src/reconcile/cacheWait.js';
import { PROGRESS_WRITE_INTERVAL_MS } from '../../src/reconcile/guardPass.js';
import { Reconciler } from '../../src/reconcile/reconciler.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { CRD_OUTDATED_MSG, SCHEMA_OUTDATED_RETRY_MS } from '../../src/reconcile/schemaOutdated.js';
import { enumRefusalBody } from '../support/apiStatus.js';

const NS = 'team';
const T0 = Date.parse('2026-01-01T00:00:00Z');

function ds(hashGen: string, counters: Partial<SlimDaemonSet['status']> = {}): SlimDaemonSet {
  return {
    metadata: {
      name: 'decoder',
      namespace: NS,
      uid: 'ds-uid',
      generation: Number(hashGen),
      resourceVersion: '10',
      annotations: { 'deprecated.daemonset.template.generation': hashGen },
    },
    spec: { updateStrategy: { type: 'RollingUpdate' }, minReadySeconds: 0, placement: {}, images: ['img'] },
    status: {
      observedGeneration: Number(hashGen),
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      updatedNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
      numberMisscheduled: 0,
      ...counters,
    },
  };
}

function pod(node: string, hash: string, ready: boolean, waitingReason?: string): SlimPod {
  return {
    metadata: {
      name: `decoder-${node}-${hash}`,
      namespace: NS,
      uid: `${node}-${hash}`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'decoder', uid: 'ds-uid', controller: true }],
    },
    node,
    scheduled: true,
    hash,
    images: [hash === 'bad' ? 'img:broken' : 'img:1'],
    phase: ready ? 'Running' : 'Pending',
    ready,
    restartCount: 0,
    ...(waitingReason ? { waitingReason, waitingMessage: 'Back-off pulling image' } : {}),
  };
}

const rev = (hash: string, revision: number): SlimRevision => ({
  metadata: { name: `decoder-${hash}`, namespace: NS, uid: `cr-${hash}` },
  hash,
  revision,
});
const node = (name: string): SlimNode => ({ metadata: { name, labels: {} }, taints: [] });

/** The world and an API that records what the reconciler asked of it. */
class World implements CacheView {
  daemonSets = new Map<string, SlimDaemonSet>();
  pods: SlimPod[] = [];
  revs: SlimRevision[] = [];
  nodeList = [node('n1'), node('n2'), node('n3')];
  guardObj: SlimGuard;
  log: string[] = [];
  conflictsLeft = 0;
  undoOutcome: UndoOutcome = { kind: 'Applied' };
  /** Events that exist, by announcement id (the API server refuses a second create of one as AlreadyExists). */
  created = new Set<string>();
  /** Event creates that fail (e.g. the API server is briefly unavailable) before they succeed again. */
  emitFailuresLeft = 0;
  /** Status writes refused with 403 Forbidden. */
  forbidden = false;
  /** A cause the installed CRD does not know: a status write carrying it draws the API server's 422. */
  refusedCause: string | undefined;
  /** Undo patches that draw a 409 escaping the undo port. */
  undoConflict = false;
  rv = 1;
  /** When each pod was first seen failing by its watch (wall ms), as the pod watches report it. */
  failureSeen = new Map<string, number>();

  constructor(spec: Partial<SlimGuard['spec']> = {}) {
    this.guardObj = {
      metadata: { name: 'decoder', namespace: NS, uid: 'g-uid', generation: 1, resourceVersion: '1' },
      spec: {
        targetRef: { kind: 'DaemonSet', name: 'decoder' },
        suspectAfterSeconds: 10,
        progressDeadlineSeconds: 30,
        onStall: { action: 'Undo', delaySeconds: 0, forcedRollback: true },
        ...spec,
      },
    };
  }

  workload<K extends TargetKind>(kind: K, _ns: string, name: string): SlimWorkloads[K] | undefined {
    return (kind === 'DaemonSet' ? this.daemonSets.get(name) : undefined) as SlimWorkloads[K] | undefined;
  }
  podsOwnedBy(): SlimPod[] {
    return this.pods;
  }
  revisionsOwnedBy(): SlimRevision[] {
    return this.revs;
  }
  podFailureSighting(_ns: string, pod: string): FailureSighting | undefined {
    const at = this.failureSeen.get(pod);
    return at === undefined ? undefined : { at };
  }
  nodes(): SlimNode[] {
    return this.nodeList;
  }

  ports(): ReconcilerPorts {
    return {
      guard: () => this.guardObj,
      readGuard: () => {
        this.log.push('read');
        return Promise.resolve(structuredClone(this.guardObj));
      },
      writeStatus: (g: Readonly<SlimGuard>, s: GuardStatus) => {
        if (mergePatchDiff(g.status ?? {}, s) === undefined) return Promise.resolve(undefined);
        if (this.refusedCause !== undefined && s.cause === this.refusedCause) {
          this.log.push('write:422');
          return Promise.reject(ApiError.fromResponse(422, enumRefusalBody('decoder', 'status.cause', this.refusedCause)));
        }
        if (this.forbidden) {
          this.log.push('write:403');
          return Promise.reject(
            new ApiError('rolloutguards.rolloutguard.dev "decoder" is forbidden', { statusCode: 403, reason: 'Forbidden' }),
          );
        }
        if (this.conflictsLeft > 0) {
          this.conflictsLeft--;
          this.log.push('write:409');
          return Promise.reject(new ApiError('the object has been modified', { statusCode: 409, reason: 'Conflict' }));
        }
        if (g.metadata.resourceVersion !== this.guardObj.metadata.resourceVersion) {
          this.log.push('write:409-stale');
          return Promise.reject(new ApiError('stale resourceVersion', { statusCode: 409, reason: 'Conflict' }));
        }
        this.log.push(
          `write:${s.state}${s.lastUndo ? `/${s.lastUndo.result}` : ''}${s.undoPlan?.dryRun ? `/dry:${s.undoPlan.dryRun}` : ''}`,
        );
        this.guardObj = {
          ...this.guardObj,
          metadata: { ...this.guardObj.metadata, resourceVersion: String(++this.rv) },
          status: structuredClone(s),
        };
        return Promise.resolve(this.guardObj);
      },
      emit: (_g, _t, events: readonly Announcement[]) => {
        const ids: string[] = [];
        for (const e of events) {
          if (this.emitFailuresLeft > 0) {
            this.emitFailuresLeft--;
            this.log.push(`event-failed:${e.reason}`);
            continue;
          }
          this.log.push(`${this.created.has(e.id) ? 'event-exists' : 'event'}:${e.reason}`);
          this.created.add(e.id);
          ids.push(e.id);
        }
        return Promise.resolve(ids);
      },
      undo: (req: UndoRequest) => {
        this.log.push(`undo:${req.toRevisionName}`);
        if (this.undoConflict) return Promise.reject(new ApiError('the object has been modified', { statusCode: 409, reason: 'Conflict' }));
        return Promise.resolve(this.undoOutcome);
      },
      dryRun: (_kind: string, _ns: string, _n: string, rev: string): Promise<DryRunOutcome> => {
        this.log.push(`dryrun:${rev}`);
        return Promise.resolve({ kind: 'Accepted' });
      },
      evict: (_ns: string, pod: string): Promise<EvictionOutcome> => {
        this.log.push(`evict:${pod}`);
        return Promise.resolve({ kind: 'Evicted' });
      },
    };
  }

  /** Good revision rolled out everywhere. */
  healthy(): void {
    this.daemonSets.set('decoder', ds('1'));
    this.revs = [rev('good', 1)];
    this.pods = ['n1', 'n2', 'n3'].map((n) => pod(n, 'good', true));
  }

  /** The classic stall: n3 on the broken revision, pulling forever. */
  stalled(): void {
    this.daemonSets.set('decoder', ds('2', { updatedNumberScheduled: 1, numberReady: 2, numberAvailable: 2 }));
    this.revs = [rev('good', 1), rev('bad', 2)];
    this.pods = [pod('n1', 'good', true), pod('n2', 'good', true), pod('n3', 'bad', false, 'ImagePullBackOff')];
  }
}

function reconciler(w: World, clock: { t: number }): Reconciler {
  return new Reconciler(w.ports(), w, { now: () => clock.t }, new Metrics(false), pino({ level: 'silent' }));
}

/** A guard reconciled once over a healthy world: the starting point of most cases. */
async function healthyGuard(): Promise<{ w: World; clock: { t: number }; r: Reconciler }> {
  const w = new World();
  w.healthy();
  const clock = { t: T0 };
  const r = reconciler(w, clock);
  await r.reconcile(`${NS}/decoder`);
  return { w, clock, r };
}

describe('Reconciler', () => {
  it('writes nothing when nothing changed', async () => {
    const { w, clock, r } = await healthyGuard();
    assert.deepEqual(w.log, ['write:Healthy']);
    w.log = [];
    clock.t += 5000;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, [], 'a pass over an unchanged world sends no write and no event');
  });

  it('records the undo intent before patching and the outcome after, then converges', async () => {
    const { w, clock, r } = await healthyGuard();
    w.stalled();
    w.log = [];
    const started = await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, ['write:Progressing', 'event:RolloutStarted']);
    assert.ok(started.requeueAfterMs !== undefined && started.requeueAfterMs > 10_000 - 1 && started.requeueAfterMs < 11_000);
    w.log = [];
    clock.t += 30_000;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, [
      'write:Stalled/Pending',
      'event:RolloutStalled',
      'undo:decoder-good',
      'write:RollingBack/Applied',
      'event:UndoStarted',
    ]);
    // The controller restores the good template: it becomes the newest revision, pods converge.
    w.daemonSets.set('decoder', ds('3'));
    w.revs = [rev('bad', 2), rev('good', 3)];
    w.pods = ['n1', 'n2', 'n3'].map((n) => pod(n, 'good', true));
    w.log = [];
    clock.t += 2000;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, ['write:RolledBack/Complete', 'event:UndoComplete']);
  });

  it("never evicts after undoing a DaemonSet: a pod left not Ready on the undone revision is its controller's to replace", async () => {
    const { w, clock, r } = await healthyGuard();
    w.stalled();
    await r.reconcile(`${NS}/decoder`);
    clock.t += 30_000;
    await r.reconcile(`${NS}/decoder`);
    assert.ok(w.log.includes('undo:decoder-good'), w.log.join(', '));
    // The template is back and observed; n3 still has the pod of the undone revision, pulling forever.
    w.daemonSets.set('decoder', ds('3', { updatedNumberScheduled: 2, numberReady: 2, numberAvailable: 2 }));
    w.revs = [rev('bad', 2), rev('good', 3)];
    w.pods = [pod('n1', 'good', true), pod('n2', 'good', true), pod('n3', 'bad', false, 'ImagePullBackOff')];
    w.log = [];
    const states: string[] = [];
    for (let i = 0; i < 4; i++) {
      clock.t += 15_000;
      await r.reconcile(`${NS}/decoder`);
      states.push(`${w.guardObj.status?.state}`);
    }
    // The premise: a pass with the undo recorded, the template back and the pod still there.
    assert.equal(states[0], 'RollingBack', states.join(', '));
    assert.equal(w.guardObj.status?.rollout?.rollback, true, JSON.stringify(w.guardObj.status?.rollout));
    assert.equal(w.guardObj.status?.rollout?.fromRevision?.hash, 'bad');
    assert.deepEqual(
      w.log.filter((l) => l.startsWith('evict:')),
      [],
    );
    assert.equal(w.guardObj.status?.forcedRollback, undefined);
  });

  it('a crash after the patch (intent Pending, world restored) is recorded without a second patch', async () => {
    const { w, clock, r } = await healthyGuard();
    w.stalled();
    await r.reconcile(`${NS}/decoder`);
    clock.t += 30_000;
    w.undoOutcome = { kind: 'Applied' };
    // Simulate the crash: keep only the intent write (drop the outcome) by replaying from that status.
    await r.reconcile(`${NS}/decoder`);
    const afterIntent = structuredClone(w.guardObj.status!);
    afterIntent.lastUndo = { ...afterIntent.lastUndo!, result: 'Pending' };
    afterIntent.state = 'Stalled';
    w.guardObj = { ...w.guardObj, status: afterIntent };
    w.daemonSets.set('decoder', ds('3'));
    w.revs = [rev('bad', 2), rev('good', 3)];
    w.pods = ['n1', 'n2', 'n3'].map((n) => pod(n, 'good', true));
    w.log = [];
    clock.t += 1000;
    await reconciler(w, clock).reconcile(`${NS}/decoder`); // a new process: fresh memory
    assert.ok(!w.log.some((l) => l.startsWith('undo:')), `no second undo: ${w.log.join(', ')}`);
    assert.equal(w.guardObj.status?.lastUndo?.result, 'Complete');
  });

  it('a 409 re-reads the guard and decides again; a stale cached guard is never written over', async () => {
    const w = new World();
    w.healthy();
    const clock = { t: T0 };
    const r = reconciler(w, clock);
    w.conflictsLeft = 2;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, ['write:409', 'read', 'write:409', 'read', 'write:Healthy']);
  });

  it('decides from its own last write while the cache lags behind it: no 409, no re-read', async () => {
    const w = new World();
    w.healthy();
    let cached: SlimGuard = w.guardObj; // what the informer has delivered so far
    const clock = { t: T0 };
    const r = new Reconciler(
      { ...w.ports(), guard: () => cached },
      w,
      { now: () => clock.t },
      new Metrics(false),
      pino({ level: 'silent' }),
    );
    const writes = () => w.log.filter((l) => l.startsWith('write') || l === 'read');
    await r.reconcile(`${NS}/decoder`);
    // A pod event arrives before the watch delivered that write: the cache still has the version it replaced.
    w.stalled();
    clock.t += 1000;
    await r.reconcile(`${NS}/decoder`);
    clock.t += 1000;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(
      writes(),
      ['write:Healthy', 'write:Progressing'],
      'each pass patched from the latest version; nothing unchanged was sent',
    );
    // The watch catches up; then someone else writes (a spec edit): the cache is the truth again.
    cached = w.guardObj;
    await r.reconcile(`${NS}/decoder`);
    w.guardObj = {
      ...w.guardObj,
      metadata: { ...w.guardObj.metadata, resourceVersion: String(++w.rv), generation: 2 },
      spec: { ...w.guardObj.spec, progressDeadlineSeconds: 60 },
    };
    cached = w.guardObj;
    w.log = [];
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(writes(), ['write:Progressing'], 'the new generation is observed from the cache, without a conflict');
  });

  it('holds a progress-only change back for up to a second after the last write, never a transition or a newly failing node', async () => {
    const w = new World();
    w.healthy();
    const clock = { t: T0 };
    const r = reconciler(w, clock);
    const key = `${NS}/decoder`;
    await r.reconcile(key);
    clock.t += 100;
    w.stalled(); // a new rollout: RolloutStarted, written at once
    await r.reconcile(key);
    assert.deepEqual(
      w.log.filter((l) => l.startsWith('write')),
      ['write:Healthy', 'write:Progressing'],
    );
    w.log = [];
    clock.t += 200;
    w.daemonSets.set('decoder', ds('2', { updatedNumberScheduled: 1, numberReady: 1, numberAvailable: 1 })); // counters only
    const held = await r.reconcile(key);
    assert.deepEqual(w.log, [], 'not written within the interval');
    assert.equal(held.requeueAfterMs, PROGRESS_WRITE_INTERVAL_MS - 200, 'flushed by a requeue when the interval ends');
    clock.t += PROGRESS_WRITE_INTERVAL_MS - 200;
    await r.reconcile(key);
    assert.deepEqual(w.log, ['write:Progressing']);
    assert.equal(w.guardObj.status?.ready, 1);
    w.log = [];
    clock.t += 100; // a second node starts failing to pull: named at once, though the cause is the same
    w.pods = [pod('n1', 'good', true), pod('n2', 'bad', false, 'ImagePullBackOff'), pod('n3', 'bad', false, 'ImagePullBackOff')];
    w.daemonSets.set('decoder', ds('2', { updatedNumberScheduled: 2, numberReady: 1, numberAvailable: 1 }));
    await r.reconcile(key);
    assert.deepEqual(w.log, ['write:Progressing']);
    assert.deepEqual(
      w.guardObj.status?.blockedNodes?.map((b) => `${b.node}:${b.reason}`),
      ['n2:ImagePullBackOff', 'n3:ImagePullBackOff'],
    );
    w.log = [];
    clock.t += 30_000; // past the deadline: Stalled is a transition and is written at once
    await r.reconcile(key);
    assert.ok(w.log[0]?.startsWith('write:Stalled'), w.log.join(' '));
  });

  it('times each write that newly names a failing node, by part (fromEvent, queue, pass, write, total), and no other write', async () => {
    const w = new World();
    w.healthy();
    const clock = { t: T0 };
    const metrics = new Metrics(false);
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    const r = new Reconciler(w.ports(), w, { now: () => clock.t }, metrics, log);
    const counts = async (): Promise<Record<string, number>> => {
      const m = await metrics.registry.getSingleMetric('rollout_guard_explanation_seconds')?.get();
      const out: Record<string, number> = {};
      for (const v of m?.values ?? [])
        if ((v as { metricName?: string }).metricName?.endsWith('_count')) out[String(v.labels.part)] = v.value;
      return out;
    };
    const sums = async (): Promise<Record<string, number>> => {
      const m = await metrics.registry.getSingleMetric('rollout_guard_explanation_seconds')?.get();
      const out: Record<string, number> = {};
      for (const v of m?.values ?? [])
        if ((v as { metricName?: string }).metricName?.endsWith('_sum')) out[String(v.labels.part)] = v.value;
      return out;
    };
    await r.reconcile(`${NS}/decoder`, 7);
    assert.deepEqual(await counts(), {}, 'a Healthy write names no failing node');
    w.stalled();
    clock.t += 1000;
    w.failureSeen.set('decoder-n3-bad', clock.t - 400);
    await r.reconcile(`${NS}/decoder`, 250);
    assert.deepEqual(await counts(), { fromEvent: 1, queue: 1, pass: 1, write: 1, total: 1 }, 'n3 newly ImagePullBackOff: one explanation');
    const s = await sums();
    assert.equal(s.queue, 0.25, "the queue part is the key's wait the worker passed in");
    assert.ok(s.total! >= s.queue + s.pass! + s.write! - 1e-9, 'the total holds every part');
    assert.ok(
      s.fromEvent! > 0.3 && s.fromEvent! <= 0.4,
      `fromEvent runs from the pod's failure seen 400 ms before the pass: ${s.fromEvent}`,
    );
    const said = lines.filter((l) => l.msg === 'status names newly failing nodes');
    assert.equal(said.length, 1, 'one line for the one explaining write');
    assert.deepEqual(said[0]!.nodes, ['n3 (decoder-n3-bad)']);
    assert.equal(said[0]!.failureSeenAt, new Date(clock.t - 400).toISOString());
    assert.equal(said[0]!.resourceVersion, w.guardObj.metadata.resourceVersion, 'the written status, as a watch of the guard will see it');
    assert.ok(
      Date.parse(String(said[0]!.wroteAt)) <= clock.t &&
        Date.parse(String(said[0]!.queuedAt)) <= Date.parse(String(said[0]!.passStartedAt)),
    );
    clock.t += 30_000;
    await r.reconcile(`${NS}/decoder`, 3);
    assert.equal((await counts()).total, 1, 'the Stalled write names n3 again, not newly: not an explanation');
  });

  it('gives up after repeated conflicts with a transient error (the queue backs off)', async () => {
    const w = new World();
    w.healthy();
    const r = reconciler(w, { t: T0 });
    w.conflictsLeft = 100;
    await assert.rejects(
      r.reconcile(`${NS}/decoder`),
      (e: unknown) => classify(e) === 'transient' && /kept conflicting after 5 attempts/.test(String(e)),
    );
  });

  it('Report mode runs the dry run once per broken revision', async () => {
    const w = new World({ onStall: { action: 'Report', delaySeconds: 0, forcedRollback: true } });
    w.healthy();
    const clock = { t: T0 };
    const r = reconciler(w, clock);
    await r.reconcile(`${NS}/decoder`);
    w.stalled();
    await r.reconcile(`${NS}/decoder`);
    clock.t += 30_000;
    w.log = [];
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, ['write:Stalled/dry:NotRun', 'event:RolloutStalled', 'dryrun:decoder-good', 'write:Stalled/dry:Accepted']);
    w.log = [];
    clock.t += 5000;
    await r.reconcile(`${NS}/decoder`);
    assert.ok(!w.log.includes('dryrun:decoder-good'), 'not asked again');
  });

  it('a deleted guard is forgotten without any write', async () => {
    const w = new World();
    w.healthy();
    const ports = { ...w.ports(), guard: () => undefined };
    const r = new Reconciler(ports, w, { now: () => T0 }, new Metrics(false), pino({ level: 'silent' }));
    assert.deepEqual(await r.reconcile(`${NS}/decoder`), {});
    assert.deepEqual(w.log, []);
  });

  it('a node that leaves while the new revision is not cached yet is still named once it arrives', async () => {
    const { w, clock, r } = await healthyGuard();
    // A template without the toleration lands together with the taint: the controller has observed it
    // and DESIRED is already 2, but our ControllerRevision cache still shows only the old revision.
    w.nodeList = [
      node('n1'),
      node('n2'),
      { metadata: { name: 'n3', labels: {} }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }] },
    ];
    w.daemonSets.set(
      'decoder',
      ds('2', { desiredNumberScheduled: 2, currentNumberScheduled: 2, updatedNumberScheduled: 0, numberReady: 2, numberAvailable: 2 }),
    );
    w.pods = [pod('n1', 'good', true), pod('n2', 'good', true)];
    w.log = [];
    clock.t += 100;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, [], 'the pass waits for the revision cache and records nothing');
    w.revs = [rev('good', 1), rev('bad', 2)];
    clock.t += 100;
    await r.reconcile(`${NS}/decoder`);
    const st = w.guardObj.status;
    assert.equal(st?.cause, 'TargetShrank');
    assert.equal(st?.rollout?.desiredAtStart, 3);
    assert.deepEqual(st?.rollout?.leftNodes, [{ node: 'n3', reason: 'untolerated taint dedicated=gpu:NoExecute', nodeChanged: true }]);
  });

  it('caches that keep disagreeing are relisted every CACHE_RELIST_AFTER_MS, and decide stops waiting at its limit', async () => {
    const w = new World();
    w.healthy();
    const clock = { t: T0 };
    const relists: string[] = [];
    const r = new Reconciler(
      { ...w.ports(), relistTargetCaches: (kind: TargetKind, ns: string) => relists.push(`${kind} ${ns}`) },
      w,
      { now: () => clock.t },
      new Metrics(false),
      pino({ level: 'silent' }),
    );
    await r.reconcile(`${NS}/decoder`);
    // The controller observed a new template; its revision never reaches our cache.
    w.daemonSets.set('decoder', ds('2', { updatedNumberScheduled: 0 }));
    const pass = async (dtMs: number): Promise<boolean> => {
      clock.t += dtMs;
      const res = await r.reconcile(`${NS}/decoder`);
      return res.decision?.deferred === true;
    };
    assert.equal(await pass(100), true);
    assert.equal(await pass(CACHE_RELIST_AFTER_MS - 1), true);
    assert.deepEqual(relists, [], 'within the wait: the revision is just late');
    assert.equal(await pass(1), true);
    assert.deepEqual(relists, [`DaemonSet ${NS}`]);
    assert.equal(await pass(1000), true);
    assert.deepEqual(relists, [`DaemonSet ${NS}`], 'not again at once');
    assert.equal(await pass(CACHE_RELIST_AFTER_MS), true);
    assert.deepEqual(relists, [`DaemonSet ${NS}`, `DaemonSet ${NS}`], 'still disagreeing one wait later: asked again');
    assert.deepEqual(w.log, ['write:Healthy'], 'nothing written while waiting');
    // Past the limit decide takes what it sees rather than freeze the guard on the old template.
    assert.equal(await pass(CACHE_WAIT_LIMIT_MS), false);
    assert.equal(w.guardObj.status?.templateGeneration, '2');
    assert.notEqual(w.guardObj.status?.state, 'Healthy', 'an incomplete rollout is not reported healthy');
  });

  it('a new revision seen before the DaemonSet update waits for it instead of completing on the old counters', async () => {
    const { w, clock, r } = await healthyGuard();
    // The revision watch delivers first: the cached DaemonSet still shows generation 1, fully updated.
    w.revs = [rev('good', 1), rev('bad', 2)];
    w.log = [];
    clock.t += 100;
    const early = await r.reconcile(`${NS}/decoder`);
    assert.equal(early.decision?.deferred, true);
    assert.deepEqual(w.log, [], 'no rollout recorded, least of all a complete one');
    // The DaemonSet update arrives: the rollout to revision 2 starts and is not complete.
    w.stalled();
    clock.t += 100;
    await r.reconcile(`${NS}/decoder`);
    assert.deepEqual(w.log, ['write:Progressing', 'event:RolloutStarted']);
    assert.equal(w.guardObj.status?.rollout?.toRevision.hash, 'bad');
    assert.equal(w.guardObj.status?.rollout?.completedAt, undefined);
  });

  it('our undo renumbering the old revision before the DaemonSet update arrives is waited for too', async () => {
    const { w, clock, r } = await healthyGuard();
    w.stalled();
    await r.reconcile(`${NS}/decoder`);
    clock.t += 30_000;
    await r.reconcile(`${NS}/decoder`); // Stalled → undo applied
    assert.equal(w.guardObj.status?.lastUndo?.result, 'Applied');
    // The controller renumbers "good" to 3; that reaches our cache before the DaemonSet's generation 3.
    w.revs = [rev('bad', 2), rev('good', 3)];
    w.log = [];
    clock.t += 100;
    assert.equal((await r.reconcile(`${NS}/decoder`)).decision?.deferred, true);
    assert.deepEqual(w.log, []);
    w.daemonSets.set('decoder', ds('3', { updatedNumberScheduled: 1, numberReady: 2, numberAvailable: 2 }));
    clock.t += 100;
    await r.reconcile(`${NS}/decoder`);
    assert.equal(w.guardObj.status?.state, 'RollingBack');
    w.pods = ['n1', 'n2', 'n3'].map((n) => pod(n, 'good', true));
    w.daemonSets.set('decoder', ds('3'));
    clock.t += 1000;
    await r.reconcile(`${NS}/decoder`);
    assert.equal(w.guardObj.status?.state, 'RolledBack');
    assert.equal(w.guardObj.status?.lastUndo?.result, 'Complete');
  });

  it('a template the controller has not observed yet keeps the old revision pair, so the new revision is taken at once', async () => {
    const { w, clock, r } = await healthyGuard();
    // Generation 2 is not observed yet: no revision exists for it.
    w.daemonSets.set('decoder', ds('2', { observedGeneration: 1 }));
    clock.t += PROGRESS_WRITE_INTERVAL_MS; // past the write hold of a message-only change
    const waiting = await r.reconcile(`${NS}/decoder`);
    assert.equal(waiting.decision?.deferred, undefined);
    assert.equal(w.guardObj.status?.templateGeneration, '1', 'paired with revision 1 until revision 2 exists');
    assert.match(w.guardObj.status?.message ?? '', /observe generation 2/);
    // The controller observes it and creates revision 2: the rollout starts on this pass.
    w.stalled();
    w.log = [];
    clock.t += 100;
    const started = await r.reconcile(`${NS}/decoder`);
    assert.equal(started.decision?.deferred, undefined);
    assert.deepEqual(w.log, ['write:Progressing', 'event:RolloutStarted']);
    assert.equal(w.guardObj.status?.templateGeneration, '2');
  });

  describe('Events: written into status with their transition, announced once', () => {
    it('the transition and its Events are one write; a later pass announces nothing again', async () => {
      const { w, clock, r } = await healthyGuard();
      w.stalled();
      w.log = [];
      await r.reconcile(`${NS}/decoder`);
      assert.deepEqual(w.log, ['write:Progressing', 'event:RolloutStarted']);
      assert.deepEqual(
        w.guardObj.status?.announcements?.map((a) => a.reason),
        ['RolloutStarted'],
      );
      w.log = [];
      clock.t += 2000;
      await r.reconcile(`${NS}/decoder`);
      assert.deepEqual(w.log, [], 'an announced entry is not dropped by a write of its own, nor sent again');
    });

    it('an Event the API server did not take brings the guard back soon and is announced then, exactly once', async () => {
      const { w, clock } = await healthyGuard();
      const requeued: Array<[string, number]> = [];
      const r = new Reconciler(w.ports(), w, { now: () => clock.t }, new Metrics(false), pino({ level: 'silent' }), {
        requeue: (key, afterMs) => requeued.push([key, afterMs]),
      });
      await r.reconcile(`${NS}/decoder`);
      w.stalled();
      w.emitFailuresLeft = 1;
      w.log = [];
      await r.reconcile(`${NS}/decoder`);
      await r.settled();
      assert.deepEqual(w.log, ['write:Progressing', 'event-failed:RolloutStarted']);
      assert.equal(requeued.length, 1, 'brought back once');
      const [key, afterMs] = requeued[0]!;
      assert.equal(key, `${NS}/decoder`);
      assert.ok(afterMs > 0 && afterMs <= 5000, `retried soon, not at the deadline: ${afterMs}`);
      w.log = [];
      clock.t += afterMs;
      await r.reconcile(`${NS}/decoder`);
      await r.settled();
      assert.deepEqual(w.log, ['event:RolloutStarted'], 'announced without a status write');
      w.log = [];
      clock.t += 1000;
      await r.reconcile(`${NS}/decoder`);
      await r.settled();
      assert.deepEqual(w.log, []);
      assert.equal(requeued.length, 1, 'nothing left to bring back');
    });

    it('a pass does not wait for its Events: the next pass runs meanwhile, carries them in status and does not send them again', async () => {
      const { w, clock } = await healthyGuard();
      const answers: Array<() => void> = [];
      const sent: string[] = [];
      const slow: ReconcilerPorts = {
        ...w.ports(),
        // Every POST answers only when the test says so, each with the ids it was given.
        emit: (_g, _t, events) => {
          sent.push(...events.map((e) => e.reason));
          return new Promise<string[]>((resolve) => answers.push(() => resolve(events.map((e) => e.id))));
        },
      };
      const r = new Reconciler(slow, w, { now: () => clock.t }, new Metrics(false), pino({ level: 'silent' }));
      w.stalled();
      await r.reconcile(`${NS}/decoder`); // resolves although the Event's POST has not answered
      assert.deepEqual(sent, ['RolloutStarted']);
      const id = w.guardObj.status?.announcements?.[0]?.id;
      assert.ok(id !== undefined);

      let settled = false;
      void r.settled().then(() => (settled = true));
      clock.t += 30_000; // Stalled: a transition of its own, written while the first Event is still being sent
      w.undoOutcome = { kind: 'NotUndone', detail: 'test' };
      await r.reconcile(`${NS}/decoder`);
      assert.equal(w.guardObj.status?.state, 'Stalled');
      assert.ok(
        w.guardObj.status?.announcements?.some((a) => a.id === id),
        'the Event being sent is kept in status until it is known announced',
      );
      assert.equal(sent.filter((x) => x === 'RolloutStarted').length, 1, 'not sent a second time while the first is under way');
      assert.equal(settled, false, 'settled waits for the announcement under way');
      for (const answer of answers) answer();
      await r.settled();
      assert.equal(settled, true);
    });

    it('a crash between the status write and the Events: the next process announces them, and one already created is refused, not doubled', async () => {
      const { w, clock } = await healthyGuard();
      w.stalled();
      // Process A writes the transition and dies before announcing: its emit never reaches the API server.
      const a = new Reconciler(
        { ...w.ports(), emit: () => new Promise<string[]>(() => undefined) },
        w,
        { now: () => clock.t },
        new Metrics(false),
        pino({ level: 'silent' }),
      );
      void a.reconcile(`${NS}/decoder`);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(w.log.slice(-1), ['write:Progressing']);
      assert.deepEqual(
        w.guardObj.status?.announcements?.map((x) => x.reason),
        ['RolloutStarted'],
      );
      // Process B (a new leader, fresh memory) announces it.
      w.log = [];
      clock.t += 1000;
      await reconciler(w, clock).reconcile(`${NS}/decoder`);
      assert.deepEqual(w.log, ['event:RolloutStarted']);
      // Process C finds it announced already: the API server refuses the same name, nothing is doubled.
      w.log = [];
      clock.t += 1000;
      await reconciler(w, clock).reconcile(`${NS}/decoder`);
      assert.deepEqual(w.log, ['event-exists:RolloutStarted']);
      assert.equal(w.created.size, 1, 'one Event: the rollout start');
    });

    it('announced entries leave status with the next write made for another reason', async () => {
      const { w, clock, r } = await healthyGuard();
      w.stalled();
      await r.reconcile(`${NS}/decoder`);
      w.log = [];
      clock.t += 30_000; // Stalled: a new transition with its own Event
      w.undoOutcome = { kind: 'NotUndone', detail: 'test' };
      await r.reconcile(`${NS}/decoder`);
      assert.deepEqual(
        w.log.filter((l) => l.startsWith('event')),
        ['event:RolloutStalled', 'event:UndoSkipped'],
      );
      // The intent write dropped the announced RolloutStarted; the outcome write, the announced RolloutStalled.
      assert.deepEqual(
        w.guardObj.status?.announcements?.map((x) => x.reason),
        ['UndoSkipped'],
      );
    });
  });

  describe('failures keep the deadline', () => {
    it('a 403 on the status write fails the pass as forbidden and keeps the deadline decide computed', async () => {
      // The same pass allowed to write, for the deadline it returns.
      const allowed = await healthyGuard();
      allowed.w.stalled();
      allowed.clock.t += 100;
      const want = (await allowed.r.reconcile(`${NS}/decoder`)).requeueAfterMs;
      assert.ok(want !== undefined && want > 0);

      const { w, clock, r } = await healthyGuard();
      w.stalled();
      w.forbidden = true;
      clock.t += 100;
      const err = await r.reconcile(`${NS}/decoder`).then(
        () => assert.fail('the pass should fail'),
        (e: unknown) => e,
      );
      assert.equal(classify(err), 'forbidden');
      assert.equal(deadlineOf(err), want, 'the Suspect deadline is kept beside the backoff');
      assert.deepEqual(w.log.slice(-1), ['write:403']);
    });

    it('a 409 escaping the undo is a transient failure of the pass, never a re-run: one undo attempt', async () => {
      const { w, clock, r } = await healthyGuard();
      w.stalled();
      await r.reconcile(`${NS}/decoder`);
      clock.t += 30_000;
      w.undoConflict = true;
      w.log = [];
      await assert.rejects(
        r.reconcile(`${NS}/decoder`),
        (e: unknown) => classify(e) === 'transient' && /the target kept changing/.test(String(e)),
      );
      assert.deepEqual(
        w.log.filter((l) => l.startsWith('undo:') || l === 'read'),
        ['undo:decoder-good'],
        'no guard re-read, no second undo in this pass',
      );
      assert.equal(w.guardObj.status?.lastUndo?.result, 'Pending', 'the intent stays recorded for the next pass to re-check');
    });
  });
  describe('a CRD older than the operator', () => {
    /** A reconciler whose log lines are kept, parsed, and whose metrics are read back. */
    function observed(w: World, clock: { t: number }) {
      const lines: Array<Record<string, unknown>> = [];
      const metrics = new Metrics(false);
      const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
      const r = new Reconciler(w.ports(), w, { now: () => clock.t }, metrics, log);
      const refused = async (): Promise<number> => {
        const m = await metrics.registry.getSingleMetric('rollout_guard_status_writes_refused_total')?.get();
        return m?.values.find((v) => v.labels.reason === 'SchemaOutdated')?.value ?? 0;
      };
      return { r, lines, refused };
    }
    const ready = (w: World) => w.guardObj.status?.conditions?.find((c) => c.type === 'Ready');

    it('writes Ready=False CRDOutdated in the status as stored, logs once per refusal, counts each one, and backs off', async () => {
      const w = new World();
      w.healthy();
      const clock = { t: T0 };
      const { r, lines, refused } = observed(w, clock);
      const key = `${NS}/decoder`;
      await r.reconcile(key);
      w.stalled();
      w.refusedCause = 'ImagePullFailure';
      w.log = [];
      clock.t += 100;
      const first = await r.reconcile(key);
      assert.deepEqual(w.log, ['write:422', 'write:Healthy'], 'the refused status, then the reduced one; no Event announced');
      assert.equal(first.requeueAfterMs, SCHEMA_OUTDATED_RETRY_MS, 'looked at again in a minute, not at once');
      const s = w.guardObj.status!;
      assert.equal(s.state, 'Healthy', 'the state as stored');
      assert.equal(s.cause ?? '', '', 'no value the old schema does not know');
      assert.equal(ready(w)?.status, 'False');
      assert.equal(ready(w)?.reason, 'CRDOutdated');
      assert.ok(ready(w)?.message.startsWith(`${CRD_OUTDATED_MSG}; `), ready(w)?.message);
      assert.match(ready(w)?.message ?? '', /status\.cause: Unsupported value: "ImagePullFailure": supported values: ""/);

      // The next passes are refused again: counted, the reduced status already written, the error not repeated.
      for (const step of [5_000, 31_000]) {
        w.log = [];
        clock.t += step;
        assert.equal((await r.reconcile(key)).requeueAfterMs, SCHEMA_OUTDATED_RETRY_MS);
        assert.deepEqual(w.log, ['write:422'], 'no undo, no Event, nothing else written while the CRD refuses');
      }
      const errors = lines.filter((l) => l.msg === CRD_OUTDATED_MSG);
      assert.equal(errors.length, 1, 'logged once per guard and refusal');
      assert.equal(errors[0]?.level, 50, 'at error level');
      assert.match(String(errors[0]?.refused), /^422 Invalid: RolloutGuard\.rolloutguard\.dev "decoder" is invalid: \[status\.cause: /);
      assert.equal(await refused(), 3);
    });

    it('writes the full status again once the CRD knows the value, and logs a new refusal again', async () => {
      const w = new World();
      w.healthy();
      const clock = { t: T0 };
      const { r, lines } = observed(w, clock);
      const key = `${NS}/decoder`;
      await r.reconcile(key);
      w.stalled();
      w.refusedCause = 'ImagePullFailure';
      clock.t += 100;
      await r.reconcile(key);
      assert.equal(ready(w)?.reason, 'CRDOutdated');

      w.refusedCause = undefined; // config/crd applied
      w.log = [];
      clock.t += 1000;
      await r.reconcile(key);
      assert.equal(w.guardObj.status?.cause, 'ImagePullFailure');
      assert.notEqual(ready(w)?.reason, 'CRDOutdated');
      assert.ok(w.log.includes('event:RolloutStarted'), `the transition's Event is announced once written: ${w.log.join(', ')}`);
      assert.equal(lines.filter((l) => l.msg === 'the installed CRD accepts the status again').length, 1);

      w.refusedCause = 'ImagePullFailure'; // an older CRD applied again
      w.guardObj = { ...w.guardObj, status: { ...w.guardObj.status, cause: '' } };
      clock.t += 1000;
      await r.reconcile(key);
      assert.equal(lines.filter((l) => l.msg === CRD_OUTDATED_MSG).length, 2, 'a refusal after a recovery is logged again');
    });

    it('a refusal after the undo intent was written reports on top of that write, no second undo', async () => {
      const { w, clock, r } = await healthyGuard();
      w.stalled();
      await r.reconcile(`${NS}/decoder`);
      clock.t += 30_000;
      w.undoOutcome = { kind: 'Applied' };
      // The intent (state Stalled) is accepted; the outcome is refused as if its state were unknown.
      const ports = w.ports();
      const writeStatus = (g: Readonly<SlimGuard>, s: GuardStatus) => w.ports().writeStatus(g, s);
      ports.writeStatus = (g, s) =>
        s.state === 'RollingBack'
          ? Promise.reject(ApiError.fromResponse(422, enumRefusalBody('decoder', 'status.state', 'RollingBack', ['Stalled'])))
          : writeStatus(g, s);
      const r2 = new Reconciler(ports, w, { now: () => clock.t }, new Metrics(false), pino({ level: 'silent' }));
      w.log = [];
      const res = await r2.reconcile(`${NS}/decoder`);
      assert.equal(res.requeueAfterMs, SCHEMA_OUTDATED_RETRY_MS);
      assert.deepEqual(
        w.log.filter((l) => l.startsWith('write') || l.startsWith('undo') || l === 'read'),
        ['write:Stalled/Pending', 'undo:decoder-good', 'write:Stalled/Pending'],
        'the reduced status patches from the intent just written: no 409, no re-read',
      );
      assert.equal(ready(w)?.reason, 'CRDOutdated');
      assert.equal(w.guardObj.status?.lastUndo?.result, 'Pending', 'the intent stays for the next pass to re-check');
    });
  });
});
