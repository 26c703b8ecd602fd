/**
 * decide(): properties of Deployment rollouts over generated timelines, with fast-check.
 *
 * A generated Deployment `web` (1–5 replicas, RollingUpdate with a generated maxSurge and maxUnavailable,
 * never both 0) runs ReplicaSet A on every pod; its template changes to B and its controller rolls it out
 * as the Deployment controller does, one step per pass: while the new pods may grow (total below replicas
 * + maxSurge) it creates one; a new pod goes Pending, then ContainerCreating for a few passes, then Ready;
 * while the available pods stay at least replicas − maxUnavailable it deletes an old pod, which is seen
 * terminating, then gone. The controller may take one pass to observe the new generation. Its status is
 * computed from the pods as the Deployment controller does (replicas, updated, ready, available).
 *
 * Each pass builds the observation with the real gather adapter (src/reconcile/targets/deployment.ts,
 * through a fake CacheView holding the Deployment, its two ReplicaSets and their pods), and decide gets
 * deep-frozen copies of it and of the status persisted after the previous pass (a JSON round trip). The
 * guard may be created at any pass. It reports only: the guard does not undo Deployments yet.
 *
 * Failures print fast-check's seed and path; set FC_SEED (and FC_PATH) to replay one, FC_RUNS to run more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { GuardStatus } from '../../../src/api/types.js';
import type { SlimDeployment, SlimNode, SlimPod, SlimReplicaSet } from '../../../src/api/objects.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { observeDeployment } from '../../../src/reconcile/targets/deployment.js';
import { check, covered } from '../../support/fastCheck.js';
import { simulatePasses, type Pass as SimulatedPass } from '../../support/simulatedPasses.js';
import { HASH, T0, iso, sec } from '../../support/fixtures.js';
import { holding } from '../../support/cacheViews.js';

// --- The generated world ----------------------------------------------------------------------------

type Rev = 'A' | 'B';
type Phase = 'pending' | 'creating' | 'ready' | 'terminating';

interface Scenario {
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  suspect: number;
  deadline: number;
  bakeSeconds: number;
  controllerLags: boolean;
  /** Per new pod, in the order created: how many passes it shows ContainerCreating before it is Ready. */
  creating: number[];
  steps: number[];
  /** The pass at which `kubectl rollout pause` stops the rollout (property b), and the waits after it. */
  pauseAt: number;
  waits: number[];
  firstSeen: number;
}

interface PodState {
  name: string;
  rev: Rev;
  phase: Phase;
  /** Passes left showing ContainerCreating. */
  left: number;
  createdAt: number;
  readyAt?: number;
}

interface Frame {
  at: number;
  generation: number;
  observedGeneration: number;
  paused: boolean;
  pods: PodState[];
}

const specArb = fc
  .record({
    suspect: fc.constantFrom(10, 30, 60, 120),
    deadline: fc.constantFrom(60, 120, 300, 600),
    bakeSeconds: fc.constantFrom(0, 0, 30),
  })
  // The CRD refuses suspectAfterSeconds >= progressDeadlineSeconds.
  .map((s) => ({ ...s, suspect: Math.min(s.suspect, s.deadline / 2) }));

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    replicas: fc.integer({ min: 1, max: 5 }),
    budget: fc.constantFrom<[number, number]>([1, 0], [0, 1], [1, 1], [2, 0], [0, 2], [2, 1]),
    spec: specArb,
    controllerLags: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    creating: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 5, maxLength: 5 }),
    steps: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 12 }),
    pauseAt: fc.integer({ min: 2, max: 20 }),
    waits: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 4 }),
    firstSeen: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 }) }),
  })
  .map(({ spec: s, budget, ...rest }) => ({ ...rest, ...s, maxSurge: budget[0], maxUnavailable: budget[1] }));

const live = (pods: readonly PodState[]): PodState[] => pods.filter((p) => p.phase !== 'terminating');

/**
 * One step of the Deployment controller (and the kubelet) on `pods`, or false when the rollout is done:
 * a terminating pod goes, a new pod that is not Ready moves on, a new pod is created while the surge allows,
 * or an old pod is deleted while the availability allows.
 */
function controllerStep(sc: Scenario, pods: PodState[], at: number, made: { n: number }): boolean {
  const gone = pods.findIndex((p) => p.phase === 'terminating');
  if (gone >= 0) return pods.splice(gone, 1).length > 0;
  const starting = pods.find((p) => p.rev === 'B' && p.phase !== 'ready');
  if (starting) {
    if (starting.phase === 'pending') starting.phase = 'creating';
    else if (starting.left > 0) starting.left--;
    else Object.assign(starting, { phase: 'ready', readyAt: at });
    return true;
  }
  const running = live(pods);
  const fresh = running.filter((p) => p.rev === 'B').length;
  if (fresh < sc.replicas && running.length < sc.replicas + sc.maxSurge) {
    pods.push({
      name: `web-${HASH.B}-${made.n}`,
      rev: 'B',
      phase: 'pending',
      left: sc.creating[made.n++ % sc.creating.length]!,
      createdAt: at,
    });
    return true;
  }
  const old = running.find((p) => p.rev === 'A');
  if (old && running.filter((p) => p.phase === 'ready').length - 1 >= sc.replicas - sc.maxUnavailable) {
    old.phase = 'terminating';
    return true;
  }
  return false;
}

/**
 * The passes of a scenario: one before the change, the change, then one per controller step until done,
 * or, with `pause`, until the pass `sc.pauseAt` pauses it, and then the waits (nothing moves while paused).
 */
function timeline(sc: Scenario, stepS: (f: number) => number, pause: boolean): Frame[] {
  let at = T0;
  let step = 0;
  const next = (): number => (at += sec(stepS(sc.steps[step++ % sc.steps.length]!)));
  const pods: PodState[] = Array.from({ length: sc.replicas }, (_, k) => ({
    name: `web-${HASH.A}-${k}`,
    rev: 'A' as const,
    phase: 'ready' as const,
    left: 0,
    createdAt: T0 - sec(7200),
    readyAt: T0 - sec(7000),
  }));
  const frames: Frame[] = [];
  const push = (generation: number, observedGeneration: number, paused = false): void => {
    frames.push({ at, generation, observedGeneration, paused, pods: pods.map((p) => ({ ...p })) });
  };
  push(1, 1);
  next();
  push(2, sc.controllerLags ? 1 : 2);
  if (sc.controllerLags) {
    next();
    push(2, 2);
  }
  const made = { n: 0 };
  while (!(pause && frames.length >= sc.pauseAt) && controllerStep(sc, pods, next(), made)) push(2, 2);
  if (!pause) return frames;
  // kubectl rollout pause bumps the generation; the controller observes it and moves nothing after.
  for (const w of sc.waits) {
    at += sec(Math.max(sc.deadline, sc.bakeSeconds) + 1 + Math.floor((w / 1000) * 19 * sc.deadline));
    push(3, 3, true);
  }
  return frames;
}

// --- From a frame to the caches ---------------------------------------------------------------------

const NODES: SlimNode[] = ['node-0', 'node-1', 'node-2'].map((name) => ({ metadata: { name }, taints: [], health: { ready: 'True' } }));

function slimPod(p: PodState, k: number): SlimPod {
  const placed = p.phase !== 'pending';
  const ready = p.phase === 'ready';
  return {
    metadata: {
      name: p.name,
      namespace: 'ns',
      creationTimestamp: iso(p.createdAt),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${HASH[p.rev]}`, uid: `rs-${p.rev}`, controller: true }],
      // Terminating within its grace period (a day), never stuck past it: that is another story.
      ...(p.phase === 'terminating' ? { deletionTimestamp: iso(p.createdAt + sec(86_400)) } : {}),
    },
    ...(placed ? { node: NODES[k % NODES.length]!.metadata.name } : {}),
    scheduled: placed,
    hash: HASH[p.rev],
    images: [`web:${p.rev}`],
    phase: p.phase === 'pending' || p.phase === 'creating' ? 'Pending' : 'Running',
    ready,
    ...(ready && p.readyAt !== undefined ? { readySince: iso(p.readyAt) } : {}),
    restartCount: 0,
  };
}

function replicaSet(rev: Rev, revision: number, pods: readonly PodState[]): SlimReplicaSet {
  const mine = live(pods).filter((p) => p.rev === rev);
  const ready = mine.filter((p) => p.phase === 'ready').length;
  return {
    metadata: {
      name: `web-${HASH[rev]}`,
      namespace: 'ns',
      uid: `rs-${rev}`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-uid', controller: true }],
    },
    hash: HASH[rev],
    revision,
    replicas: mine.length,
    current: mine.length,
    ready,
    available: ready,
    templateDigest: `tpl-${rev}`,
  };
}

/** The Deployment of a frame, its status computed from the pods as the Deployment controller does. */
function deployment(sc: Scenario, f: Frame): SlimDeployment {
  const running = live(f.pods);
  const ready = running.filter((p) => p.phase === 'ready').length;
  const update: Rev = f.observedGeneration >= 2 ? 'B' : 'A';
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'deploy-uid', generation: f.generation },
    spec: {
      replicas: sc.replicas,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: sc.maxSurge, maxUnavailable: sc.maxUnavailable } },
      minReadySeconds: 0,
      progressDeadlineSeconds: 600,
      paused: f.paused,
      images: [`web:${f.generation >= 2 ? 'B' : 'A'}`],
      templateDigest: `tpl-${f.generation >= 2 ? 'B' : 'A'}`,
    },
    status: {
      observedGeneration: f.observedGeneration,
      replicas: running.length,
      updatedReplicas: running.filter((p) => p.rev === update).length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, sc.replicas - ready),
    },
  };
}

function cacheOf(sc: Scenario, f: Frame): CacheView {
  const pods = f.pods.map(slimPod);
  // The controller makes the new ReplicaSet when it observes the new template.
  const sets = [replicaSet('A', 1, f.pods), ...(f.observedGeneration >= 2 ? [replicaSet('B', 2, f.pods)] : [])];
  return {
    workload: holding({ Deployment: deployment(sc, f) }, { namespace: 'ns', name: 'web' }),
    podsOwnedBy: (uid) => pods.filter((p) => p.metadata.ownerReferences?.[0]?.uid === uid),
    revisionsOwnedBy: () => [],
    replicaSetsOwnedBy: (uid) => (uid === 'deploy-uid' ? sets : []),
    nodes: () => NODES,
  };
}

// --- The passes -------------------------------------------------------------------------------------------

type Pass = SimulatedPass<Frame>;

/** Gather (the adapter) → decide → persist over the frames from the guard's creation on. */
function simulate(sc: Scenario, frames: readonly Frame[]): Pass[] {
  return simulatePasses(
    { kind: 'Deployment', name: 'web', ...sc, cacheOf: (frame) => cacheOf(sc, frame), observe: observeDeployment },
    frames,
  );
}

/** The passes up to `i`, one line each, for a failure report. */
function trail(passes: readonly Pass[], i: number): string {
  return passes
    .slice(0, i + 1)
    .map((p) => {
      const t = p.obs.target;
      const pods = p.frame.pods.map((q) => `${q.rev}:${q.phase}`).join(' ');
      const s = p.decision.status;
      return `  #${p.i} t+${(p.frame.at - T0) / 1000}s gen ${t.generation}/${t.observedGeneration}${p.frame.paused ? ' paused' : ''} updated ${t.updated} available ${t.available} [${pods}] → ${String(s.state)} ${String(s.cause ?? '')}: ${String(s.message ?? '').slice(0, 160)}`;
    })
    .join('\n');
}

/** Pods that are available pods of `hash`. */
const availableOn = (obs: Pass['obs'], hash: string): number =>
  obs.nodes.filter((u) => u.eligible && u.pods.some((p) => p.hash === hash && p.available && !p.deleting)).length;

const STALL_STATES: ReadonlyArray<GuardStatus['state']> = ['Suspect', 'Stalled'];

describe('decide on Deployment rollouts (fast-check)', () => {
  /*
   * a. Progress read from the observations (on a pass the controller observed, more available pods of
   *    the current revision, or a higher updated or available count, than on any earlier pass of the same
   *    revision) is never Suspect or Stalled. Passes come less than suspectAfterSeconds apart, but a pod may
   *    take several passes to start, so a guard may turn Suspect in between: progress must bring it back.
   */
  it('a. never Suspect or Stalled on a pass where pods progress', (t) => {
    const seen = { passes: 0, progress: 0, progressAfterSuspect: 0, surged: 0 };
    const checked = check(scenarioArb, 100, (sc) => {
      const stepS = (f: number): number => 1 + Math.floor((f / 1000) * (sc.suspect - 2));
      const passes = simulate(sc, timeline(sc, stepS, false));
      let run: { hash: string; onRev: number; updated: number; available: number } | undefined;
      for (const p of passes) {
        seen.passes++;
        const hash = p.obs.currentRevision?.hash;
        if (hash === undefined) continue;
        const observed = p.obs.target.observedGeneration >= p.obs.target.generation;
        const cur = {
          hash,
          onRev: availableOn(p.obs, hash),
          updated: observed ? p.obs.target.updated : -1,
          available: observed ? p.obs.target.available : -1,
        };
        if (run?.hash === hash && observed && (cur.onRev > run.onRev || cur.updated > run.updated || cur.available > run.available)) {
          seen.progress++;
          if (p.obs.target.current > p.obs.target.desired) seen.surged++;
          if (STALL_STATES.includes(p.prev.state)) seen.progressAfterSuspect++;
          const s = p.decision.status;
          assert.ok(
            !STALL_STATES.includes(s.state),
            `${String(s.state)} (${String(s.cause)}) on a pass with progress (${JSON.stringify(cur)} after ${JSON.stringify(run)}) at pass #${p.i}:\n${trail(passes, p.i)}`,
          );
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
      const last = passes[passes.length - 1]!;
      assert.ok(
        last.decision.status.state === 'Healthy' || last.decision.status.state === 'Progressing',
        `a finished rollout ends Healthy (or baking):\n${trail(passes, last.i)}`,
      );
    });
    t.diagnostic(`coverage: ${JSON.stringify(seen)}`);
    covered(seen, { progress: 200, surged: 30, progressAfterSuspect: 3 }, 100, checked);
  });

  /*
   * b. Paused mid-rollout by its spec (kubectl rollout pause), the rollout moves no more; however long
   *    the pause (each pass far past progressDeadlineSeconds), no pass while paused is Suspect or Stalled,
   *    and each is Healthy and says it is paused, but one that bakes a rollout already on every replica. Passes before it may come up to twice progressDeadlineSeconds apart
   *    (a stall before the pause is allowed, and the pause still reads Healthy).
   */
  it('b. never a stall while paused, however long the pause', (t) => {
    const seen = { pausedPasses: 0, pausedMidway: 0, stalledBefore: 0 };
    const checked = check(scenarioArb, 100, (sc) => {
      const stepS = (f: number): number => 1 + Math.floor((f / 1000) * 2 * sc.deadline);
      const passes = simulate(sc, timeline(sc, stepS, true));
      let first = true;
      for (const p of passes) {
        if (!p.frame.paused) continue;
        seen.pausedPasses++;
        if (first) {
          first = false;
          if (p.obs.target.updated < p.obs.target.desired || p.obs.target.current > p.obs.target.desired) seen.pausedMidway++;
          if (STALL_STATES.includes(p.prev.state)) seen.stalledBefore++;
        }
        const s = p.decision.status;
        const where = `at pass #${p.i}:\n${trail(passes, p.i)}`;
        assert.ok(!STALL_STATES.includes(s.state), `${String(s.state)} (${String(s.cause)}) while paused ${where}`);
        // Healthy and saying so, unless the rollout had already reached every replica (its bake goes on).
        if (!s.rollout?.updatedAt || s.state === 'Healthy') {
          assert.equal(s.state, 'Healthy', where);
          assert.match(String(s.message), /paused/i, where);
        }
      }
    });
    t.diagnostic(`coverage: ${JSON.stringify(seen)}`);
    covered(seen, { pausedPasses: 150, pausedMidway: 50, stalledBefore: 3 }, 100, checked);
  });
});
