/**
 * decide(): properties of StatefulSet rollouts over generated timelines, with fast-check.
 *
 * A generated StatefulSet `store` (1–5 replicas, RollingUpdate, a partition p) runs revision A on every
 * ordinal; its template changes to B and the controller updates the ordinals from the highest down to p,
 * one at a time, as it does (OrderedReady): the old pod may be seen terminating, then gone, the new one
 * Pending and then ContainerCreating, each on a pass of its own, before it is Ready. The controller may
 * take one pass to observe the new generation. Its status is computed from the pods as the StatefulSet
 * controller computes it (replicas, ready, available, current and updated counts; currentRevision
 * becomes updateRevision once every pod is updated and ready, so never while p > 0).
 *
 * Each pass builds the observation with the real gather adapter (src/reconcile/targets/statefulSet.ts,
 * through a fake CacheView, with the TargetMemory a GuardPass keeps), and decide gets deep-frozen copies
 * of it and of the status persisted after the previous pass (a JSON round trip). The guard may be
 * created at any pass (it then first sees the rollout midway or done). The guard reports only: the CRD
 * refuses Undo for a StatefulSet.
 *
 * Failures print fast-check's seed and path; set FC_SEED (and FC_PATH) to replay one, FC_RUNS to run more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { GuardStatus } from '../../../src/api/types.js';
import type { SlimNode, SlimPod, SlimRevision, SlimStatefulSet } from '../../../src/api/objects.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { observeStatefulSet } from '../../../src/reconcile/targets/statefulSet.js';
import { check, covered } from '../../support/fastCheck.js';
import { simulatePasses, type Pass as SimulatedPass } from '../../support/simulatedPasses.js';
import { HASH, T0, iso, sec } from '../../support/fixtures.js';
import { holding } from '../../support/cacheViews.js';

// --- The generated world ----------------------------------------------------------------------------

type Rev = 'A' | 'B';
/** What a pass shows of the ordinal being updated before its new pod is Ready. */
type Between = 'terminating' | 'gone' | 'pending' | 'creating';

interface Scenario {
  replicas: number;
  partition: number;
  suspect: number;
  deadline: number;
  bakeSeconds: number;
  /** The controller observes the new generation one pass late. */
  controllerLags: boolean;
  /** Per ordinal updated (the highest first): the passes shown before its new pod is Ready. */
  updates: Between[][];
  /** Seconds between passes, as fractions (per mille) of the scenario's step bound; reused in turn. */
  steps: number[];
  /** Seconds each pass waits once the rollout reached its partition (property b). */
  waits: number[];
  /** The first pass the guard decides (it is created then). */
  firstSeen: number;
}

interface PodState {
  rev: Rev;
  phase: 'ready' | Exclude<Between, 'gone'>;
  createdAt: number;
  readyAt?: number;
}
/** The world as one pass sees it. */
interface Frame {
  at: number;
  generation: number;
  observedGeneration: number;
  pods: Array<PodState | undefined>;
  /** Every ordinal from the partition up is on B and Ready, every one below on A and Ready, and the controller observed it. */
  atPartition: boolean;
}

const specArb = fc
  .record({
    suspect: fc.constantFrom(10, 30, 60, 120),
    deadline: fc.constantFrom(60, 120, 300, 600),
    bakeSeconds: fc.constantFrom(0, 0, 30, 180),
  })
  // The CRD refuses suspectAfterSeconds >= progressDeadlineSeconds.
  .map((s) => ({ ...s, suspect: Math.min(s.suspect, s.deadline / 2) }));

/**
 * The passes one ordinal shows before its new pod is Ready, in the order they come: its old pod
 * terminating, gone, the new one Pending, then ContainerCreating for up to three passes (an image pull
 * takes a while: passes without progress).
 */
const betweenArb: fc.Arbitrary<Between[]> = fc
  .tuple(fc.subarray<Between>(['terminating', 'gone', 'pending']), fc.integer({ min: 0, max: 3 }))
  .map(([first, creating]) => [...first, ...Array.from({ length: creating }, (): Between => 'creating')]);

/** A scenario of `replicas` and a partition from 0 up to `maxHeld(replicas)`. */
const scenarioArb = (maxHeld: (replicas: number) => number): fc.Arbitrary<Scenario> =>
  fc
    .integer({ min: 1, max: 5 })
    .chain((replicas) =>
      fc.record({
        replicas: fc.constant(replicas),
        partition: fc.integer({ min: 0, max: maxHeld(replicas) }),
        spec: specArb,
        controllerLags: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        updates: fc.array(betweenArb, { minLength: replicas, maxLength: replicas }),
        steps: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 12 }),
        waits: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 4 }),
        firstSeen: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }) }),
      }),
    )
    .map(({ spec: s, ...rest }) => ({ ...rest, ...s }));

/**
 * The passes of a scenario: a pass before the change, the change, each updated ordinal's passes, then
 * `waitS` passes at the partition. `stepS(f)` turns a generated fraction into seconds.
 */
function timeline(sc: Scenario, stepS: (f: number) => number, waitS: (f: number) => number): Frame[] {
  let at = T0;
  let step = 0;
  const next = (): number => (at += sec(stepS(sc.steps[step++ % sc.steps.length]!)));
  const old: PodState = { rev: 'A', phase: 'ready', createdAt: T0 - sec(7200), readyAt: T0 - sec(7000) };
  const pods: Array<PodState | undefined> = Array.from({ length: sc.replicas }, () => ({ ...old }));
  const frames: Frame[] = [];
  const push = (generation: number, observedGeneration: number): void => {
    const atPartition =
      generation === 2 &&
      observedGeneration === 2 &&
      pods.every((p, k) => p?.phase === 'ready' && p.rev === (k >= sc.partition ? 'B' : 'A'));
    frames.push({ at, generation, observedGeneration, pods: pods.map((p) => (p ? { ...p } : undefined)), atPartition });
  };
  push(1, 1);
  next();
  push(2, sc.controllerLags ? 1 : 2);
  if (sc.controllerLags) {
    next();
    push(2, 2);
  }
  for (let k = sc.replicas - 1; k >= sc.partition; k--) {
    for (const b of sc.updates[k]!) {
      next();
      pods[k] = b === 'gone' ? undefined : b === 'terminating' ? { ...old, phase: 'terminating' } : { rev: 'B', phase: b, createdAt: at };
      push(2, 2);
    }
    next();
    const created = pods[k]?.rev === 'B' ? pods[k]!.createdAt : at;
    pods[k] = { rev: 'B', phase: 'ready', createdAt: created, readyAt: at };
    push(2, 2);
  }
  for (const w of sc.waits) {
    at += sec(waitS(w));
    push(2, 2);
  }
  return frames;
}

// --- From a frame to the caches ---------------------------------------------------------------------

const NAME = 'store';
const HASH_OF: Record<Rev, string> = { A: HASH.A, B: HASH.B };
const revisionName = (r: Rev): string => `${NAME}-${HASH_OF[r]}`;
const NODES: SlimNode[] = ['node-0', 'node-1', 'node-2'].map((name) => ({ metadata: { name }, taints: [], health: { ready: 'True' } }));

function slimPod(k: number, p: PodState): SlimPod {
  const placed = p.phase !== 'pending';
  const ready = p.phase === 'ready';
  return {
    metadata: {
      name: `${NAME}-${k}`,
      namespace: 'ns',
      creationTimestamp: iso(p.createdAt),
      // Terminating within its grace period (a day), never stuck past it: that is another story.
      ...(p.phase === 'terminating' ? { deletionTimestamp: iso(p.createdAt + sec(86_400)) } : {}),
    },
    ...(placed ? { node: NODES[k % NODES.length]!.metadata.name } : {}),
    scheduled: placed,
    hash: HASH_OF[p.rev],
    images: [`store:${p.rev}`],
    phase: ready || p.phase === 'terminating' ? 'Running' : 'Pending',
    ready,
    ...(ready && p.readyAt !== undefined ? { readySince: iso(p.readyAt) } : {}),
    restartCount: 0,
  };
}

/** The StatefulSet of a frame, its status computed from the pods as the StatefulSet controller does. */
function statefulSet(sc: Scenario, f: Frame): SlimStatefulSet {
  const live = f.pods.filter((p): p is PodState => p !== undefined);
  const update: Rev = f.observedGeneration === 2 ? 'B' : 'A';
  const ready = live.filter((p) => p.phase === 'ready').length;
  const updated = live.filter((p) => p.phase !== 'terminating' && p.rev === update).length;
  const complete = update === 'B' && updated === sc.replicas && ready === sc.replicas && live.length === sc.replicas;
  return {
    metadata: { name: NAME, namespace: 'ns', uid: 'sts-uid', generation: f.generation },
    spec: {
      replicas: sc.replicas,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: sc.partition } },
      minReadySeconds: 0,
      images: [`store:${f.generation === 2 ? 'B' : 'A'}`],
      claimTemplates: [],
    },
    status: {
      observedGeneration: f.observedGeneration,
      replicas: live.length,
      readyReplicas: ready,
      availableReplicas: ready,
      currentReplicas: live.filter((p) => p.phase !== 'terminating' && p.rev === (complete ? 'B' : 'A')).length,
      updatedReplicas: updated,
      currentRevision: revisionName(complete ? 'B' : 'A'),
      updateRevision: revisionName(update),
    },
  };
}

function cacheOf(sc: Scenario, f: Frame): CacheView {
  const sts = statefulSet(sc, f);
  const pods = f.pods.flatMap((p, k) => (p ? [slimPod(k, p)] : []));
  const revisions: SlimRevision[] = [{ metadata: { name: revisionName('A') }, hash: HASH.A, revision: 1 }];
  if (f.generation === 2) revisions.push({ metadata: { name: revisionName('B') }, hash: HASH.B, revision: 2 });
  return {
    workload: holding({ StatefulSet: sts }, { namespace: 'ns', name: NAME }),
    podsOwnedBy: (uid) => (uid === 'sts-uid' ? pods : []),
    revisionsOwnedBy: (uid) => (uid === 'sts-uid' ? revisions : []),
    nodes: () => NODES,
  };
}

// --- The passes -------------------------------------------------------------------------------------------

type Pass = SimulatedPass<Frame>;

/** Gather (the adapter) → decide → persist over the frames from the guard's creation on. */
function simulate(sc: Scenario, frames: readonly Frame[]): Pass[] {
  return simulatePasses(
    { kind: 'StatefulSet', name: NAME, ...sc, cacheOf: (frame) => cacheOf(sc, frame), observe: observeStatefulSet },
    frames,
  );
}

/** The passes up to `i`, one line each, for a failure report. */
function trail(passes: readonly Pass[], i: number): string {
  return passes
    .slice(0, i + 1)
    .map((p) => {
      const t = p.obs.target;
      const pods = p.frame.pods.map((q) => (q ? `${q.rev}:${q.phase}` : '-')).join(' ');
      const s = p.decision.status;
      return `  #${p.i} t+${(p.frame.at - T0) / 1000}s gen ${t.generation}/${t.observedGeneration} updated ${t.updated} available ${t.available}${t.partition !== undefined ? ` partition ${t.partition}` : ''} [${pods}] → ${String(s.state)} ${String(s.cause ?? '')}: ${String(s.message ?? '').slice(0, 160)}`;
    })
    .join('\n');
}

/** Ordinals whose only pod is an available pod of `hash`. */
const onRevision = (obs: Pass['obs'], hash: string): number =>
  obs.nodes.filter((u) => u.eligible && u.pods.length === 1 && u.pods[0]!.hash === hash && u.pods[0]!.available).length;

// --- The properties ---------------------------------------------------------------------------------------

const STALL_STATES: ReadonlyArray<GuardStatus['state']> = ['Suspect', 'Stalled', 'Failed'];

describe('decide on StatefulSet rollouts (fast-check): progress is never a stall', () => {
  /*
   * a. Progress, as decide defines it (a high-water mark going up), read from the observations: on a pass
   *    the controller observed, more ordinals whose pod is an available pod of the current revision, or a
   *    higher updated or available count, than on any earlier pass of the same revision. Such a pass is
   *    never Suspect or Stalled, and when an ordinal progressed the rollout's lastProgressAt is now.
   *    Every pass comes less than suspectAfterSeconds after the one before, but an ordinal may take
   *    several passes (old pod terminating, gone, new pod Pending, ContainerCreating), so a guard may
   *    turn Suspect in between: progress must bring it back.
   */
  it('a. never Suspect or Stalled on a pass where an ordinal, or the updated or available count, progressed', (t) => {
    const seen = { passes: 0, progress: 0, ordinalProgress: 0, progressAfterSuspect: 0, held: 0 };
    const checked = check(
      scenarioArb((r) => r - 1),
      100,
      (sc) => {
        const stepS = (f: number): number => 1 + Math.floor((f / 1000) * (sc.suspect - 2));
        const passes = simulate(sc, timeline(sc, stepS, stepS));
        let run: { hash: string; onRev: number; updated: number; available: number } | undefined;
        for (const p of passes) {
          seen.passes++;
          const hash = p.obs.currentRevision?.hash;
          if (hash === undefined) continue;
          const observed = p.obs.target.observedGeneration >= p.obs.target.generation;
          const cur = {
            hash,
            onRev: onRevision(p.obs, hash),
            updated: observed ? p.obs.target.updated : -1,
            available: observed ? p.obs.target.available : -1,
          };
          if (run?.hash === hash && observed) {
            const ordinal = cur.onRev > run.onRev;
            if (ordinal || cur.updated > run.updated || cur.available > run.available) {
              seen.progress++;
              if (p.obs.target.partition !== undefined) seen.held++;
              if (p.prev.state === 'Suspect' || p.prev.state === 'Stalled') seen.progressAfterSuspect++;
              const s = p.decision.status;
              const where = `progress (${JSON.stringify(cur)} after ${JSON.stringify(run)}) at pass #${p.i}:\n${trail(passes, p.i)}`;
              assert.ok(s.state !== 'Suspect' && s.state !== 'Stalled', `${String(s.state)} (${String(s.cause)}) on a pass with ${where}`);
              if (ordinal) {
                seen.ordinalProgress++;
                assert.equal(s.rollout?.lastProgressAt, iso(p.frame.at), `an ordinal progressed and the clock did not restart: ${where}`);
              }
            }
          }
          run =
            run?.hash === hash
              ? {
                  hash,
                  onRev: Math.max(run.onRev, cur.onRev),
                  updated: Math.max(run.updated, cur.updated),
                  available: Math.max(run.available, cur.available),
                }
              : cur;
        }
      },
    );
    t.diagnostic(`coverage: ${JSON.stringify(seen)}`);
    covered(seen, { progress: 150, ordinalProgress: 100, held: 30, progressAfterSuspect: 3 }, 100, checked);
  });
});

describe('decide on StatefulSet rollouts (fast-check): waiting at the partition is never a stall', () => {
  /*
   * b. A rollout that updated every ordinal from its partition up, every pod available, is done for now:
   *    however long it then waits there (each pass far past progressDeadlineSeconds), no pass from the
   *    one that first shows it is Suspect, Stalled or Failed; it ends Healthy, and while ordinals below
   *    the partition hold the old revision with others on the new one, its message says it waits at the
   *    partition. Passes before that may come up to twice progressDeadlineSeconds apart (stalls allowed).
   */
  it('b. never a stall verdict for a rollout that reached its partition with every pod available, however long it waits there', (t) => {
    const seen = { sequences: 0, passesAtPartition: 0, heldByPartition: 0, stalledBefore: 0, firstSeenThere: 0 };
    const checked = check(
      scenarioArb((r) => r),
      100,
      (sc) => {
        const stepS = (f: number): number => 1 + Math.floor((f / 1000) * 2 * sc.deadline);
        const waitS = (f: number): number => Math.max(sc.deadline, sc.bakeSeconds) + 1 + Math.floor((f / 1000) * 19 * sc.deadline);
        const passes = simulate(sc, timeline(sc, stepS, waitS));
        seen.sequences++;
        let reached = false;
        for (const p of passes) {
          const s = p.decision.status;
          if (!reached && p.frame.atPartition) {
            reached = true;
            if (p.i === 0) seen.firstSeenThere++;
            if (STALL_STATES.includes(p.prev.state)) seen.stalledBefore++;
          }
          if (!reached) continue;
          seen.passesAtPartition++;
          assert.ok(
            !STALL_STATES.includes(s.state),
            `${String(s.state)} (${String(s.cause)}) at the partition, at pass #${p.i}:\n${trail(passes, p.i)}`,
          );
        }
        const last = passes[passes.length - 1]!;
        const where = `at the last pass #${last.i}:\n${trail(passes, last.i)}`;
        assert.ok(reached, `the partition was never reached ${where}`);
        assert.equal(last.decision.status.state, 'Healthy', where);
        if (sc.partition > 0 && sc.partition < sc.replicas) {
          seen.heldByPartition++;
          assert.match(String(last.decision.status.message), new RegExp(`it waits at partition ${sc.partition}: ordinal`), where);
        }
      },
    );
    t.diagnostic(`coverage: ${JSON.stringify(seen)}`);
    covered(seen, { passesAtPartition: 150, heldByPartition: 20, stalledBefore: 3 }, 100, checked);
  });
});
