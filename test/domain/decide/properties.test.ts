/**
 * decide(): properties over generated timelines, with fast-check.
 *
 * A generator of a small DaemonSet world (1–6 nodes, three revisions A, B and C) produces random sequences
 * of steps over a fake clock: time moves on by a random step (a second to a quarter of an hour), the
 * template may change to either revision other than the live one, nodes turn NotReady/Unknown, get
 * tainted or feel pressure, and each node's pods change (any revision, Ready, waiting out minReadySeconds,
 * restarted after starting, ErrImagePull/ImagePullBackOff, CrashLoopBackOff with an OOMKilled or Error last
 * termination, ContainerCreating with a FailedMount or sandbox Event, not schedulable, never looked at by a
 * scheduler, Terminating inside or past its grace period). The DaemonSet controller may lag (observedGeneration
 * behind, revisions not created yet), either cache may be one event behind after a template change, the
 * DaemonSet's counters may be stale, and its latest FailedCreate Event may be an admission or quota
 * refusal (fresh or old). B may drop a toleration A and C have, and may change the config volume (C then
 * has a digest of its own). Every property draws half its sequences from a second generator, of broken
 * releases (releasesArb: a change to another revision whose new pod fails on a Ready node, then time
 * passing), so that undos, and revisions undone in turn and applied again (B → undo → C → undo → B), are
 * frequent.
 *
 * Each step is one reconcile pass, carried forward as a GuardPass does (src/reconcile/guardPass.ts):
 * - the observation is built with the fixtures the other domain tests use; the nodes that left the
 *   targets come from gather's own TargetMemory (committed only after a pass that was not set aside), and
 *   the time decide has been waiting for the caches from the same CacheWait a GuardPass keeps;
 * - decide gets deep-frozen copies of the observation and of the status persisted after the previous pass;
 * - an Undo is recorded with recordUndoOutcome(…, Applied) (or AlreadyAtTarget, below), a DryRunUndo with
 *   recordDryRun(…, Accepted), and the status goes through a JSON round trip (the API server) before the
 *   next pass;
 * - after an applied undo the DaemonSet's template is the restored revision from the next pass on: a new
 *   generation, the restored ControllerRevision renumbered to the highest number (as the controller numbers
 *   a revision whose hash returns, also on a "flip" back to it), and the undo record annotation written with
 *   the same patch (target.undoRecord) as src/k8s/daemonSetUndo.ts writes it: the `undone` list carried over
 *   from the record it replaces. The pods do not move by themselves: they follow the generated per-node
 *   changes and the occasional "converge" step, so a rollback may stall as a rollout does. A later "flip"
 *   step may re-apply the broken revision, as a GitOps tool would, possibly in the very step the undo lands
 *   (reverted before any pass saw it take effect), or after another revision's release and undo.
 * Simplifications: the act step always succeeds (Applied, or AlreadyAtTarget when a flip already brought
 *   back the revision the undo restores); the reconciler's progress-write hold (a progress-only status
 *   held back for a few seconds) is not modelled, so every decided status is persisted; the guard is never
 *   suspended and is the only one on its DaemonSet.
 *
 * What these properties found (fixed, each with a table test in decide.test.ts):
 * - a guard first seeing a rollout midway from a generation whose ControllerRevision was pruned wrote
 *   `fromRevision: {revision: undefined}`: not the status read back (property 5);
 * - the broken revision re-applied before any pass saw the undo take effect (B → A → B, B renumbered)
 *   was taken for the revision cache behind, then for our undo not taking effect: RollingBack, then
 *   Stalled ControllerNotActing (owner ControlPlane) while B rolled out node after node (property 3).
 *
 * Failures print fast-check's seed and path; set FC_SEED (and FC_PATH) to replay one, FC_RUNS to run more.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { check, covered } from '../../support/fastCheck.js';
import { parse as parseYaml } from 'yaml';
import { decide } from '../../../src/domain/decide/decide.js';
import type { GuardPolicy } from '../../../src/domain/decide/pass.js';
import type { DaemonSetUndoRecord, GuardStatus } from '../../../src/api/types.js';
import type { TargetView, NodeView, Observation, PodView, RevisionView, WarningView } from '../../../src/domain/observation.js';
import type { NodeHealth } from '../../../src/api/objects.js';
import type { Decision } from '../../../src/domain/decision.js';
import { recordDryRun, recordUndoOutcome, undoneOn, withUndone } from '../../../src/domain/undo.js';
import { CacheWait } from '../../../src/reconcile/cacheWait.js';
import { TargetMemory } from '../../../src/reconcile/targetMemory.js';
import {
  DS_NAME,
  HASH,
  T0,
  deadKubelet,
  deepFreeze,
  deletingPod,
  health,
  iso,
  node,
  pod,
  policy,
  rev,
  roundTrip,
  sec,
  targetObs,
  unscheduledPod,
  unschedulablePod,
  withHealth,
} from '../../support/fixtures.js';

// --- The generated world ----------------------------------------------------------------------------

type Rev = 'A' | 'B' | 'C';
const REVS: readonly Rev[] = ['A', 'B', 'C'];
const HASH_OF: Record<Rev, string> = { A: HASH.A, B: HASH.B, C: HASH.C };
/** The two revisions other than `r`, A before B before C: a pick of 0 shrinks towards the A–B world. */
const others = (r: Rev): [Rev, Rev] => REVS.filter((x) => x !== r) as [Rev, Rev];
function revOfHash(h: string): Rev {
  const r = REVS.find((x) => HASH_OF[x] === h);
  if (r === undefined) throw new Error(`not a generated revision hash: ${JSON.stringify(h)}`);
  return r;
}

type Health = 'Ready' | 'NotReady' | 'Unknown' | 'Pressure';
type Cond =
  | 'ok'
  | 'waitMinReady'
  | 'restartedReady'
  | 'imagePull'
  | 'crashLoop'
  | 'notReady'
  | 'creating'
  | 'creatingMount'
  | 'creatingSandbox'
  | 'unschedulable'
  | 'insufficient'
  | 'unscheduled'
  | 'pending';
type Warn = 'none' | 'admission' | 'quotaRequests' | 'quotaPods' | 'staleAdmission' | 'other';

/** A pod as generated: times are offsets from the pass that creates it. */
interface PodGen {
  /** 'new': the template live when the pod is created. */
  rev: Rev | 'new';
  cond: Cond;
  restarts: number;
  oom: boolean;
  /** How long ago it became Ready (for the conditions that are Ready). */
  readyAgoS: number;
  terminating: 'no' | 'inGrace' | 'pastGrace';
}
/** What changes on one node in one step; null keeps what was there. */
interface NodeChange {
  health: Health | null;
  /** A maintenance taint no revision tolerates (someone tainted the node). */
  maintenance: boolean | null;
  /** With NotReady/Unknown: the node lifecycle controller's NoSchedule taint is on the node. */
  lifecycleTaint: boolean | null;
  pods: PodGen[] | null;
}
interface StepGen {
  dtS: number;
  /** flip: the template changes to another revision (a release, a person, or GitOps re-applying it). */
  event: 'none' | 'flip' | 'converge';
  /** With flip: which of the two revisions other than the live template (see {@link others}). */
  flipTo: 0 | 1;
  controllerLags: boolean;
  /** On the first pass after a template change, one cache may still show the previous template. */
  cacheLag: 'none' | 'revisions' | 'daemonSet';
  staleCounters: boolean;
  warning: Warn | null;
  nodes: NodeChange[];
}
interface Scenario {
  nodeCount: number;
  /** Nodes carrying a static taint that A and C tolerate (and B too, unless bDropsToleration). */
  gpu: boolean[];
  bDropsToleration: boolean;
  /** B's config volume differs from A's, and C's from both (each its own digest); otherwise all three share A's. */
  bChangesVolume: boolean;
  minReadySeconds: number;
  spec: {
    action: 'Undo' | 'Report';
    delaySeconds: number;
    suspect: number;
    deadline: number;
    failedNodesThreshold: number;
    bakeSeconds: number;
  };
  initial: NodeChange[];
  steps: StepGen[];
}

/** A pod with absolute times. */
interface PodState {
  rev: Rev;
  cond: Cond;
  restarts: number;
  oom: boolean;
  createdAt: number;
  readySince: number;
  deletionAt?: number;
}
interface NodeState {
  name: string;
  health: Health;
  maintenance: boolean;
  lifecycleTaint: boolean;
  gpu: boolean;
  pods: PodState[];
}
interface WorldWarning {
  kind: Warn;
  view: WarningView;
}
interface World {
  template: Rev;
  generation: number;
  observedGeneration: number;
  /** history[g - 1]: the template of generation g (numbered as the controller does: see {@link revisionNumbers}). */
  history: Rev[];
  /** When each revision last became the live template. */
  appliedAt: Record<Rev, number>;
  changedSinceLastPass: boolean;
  undoRecord?: DaemonSetUndoRecord;
  warning?: WorldWarning;
  nodes: NodeState[];
  lastDs?: TargetView;
}

const CONDS: ReadonlyArray<{ weight: number; cond: Cond }> = [
  { weight: 8, cond: 'ok' },
  { weight: 2, cond: 'waitMinReady' },
  { weight: 2, cond: 'restartedReady' },
  { weight: 2, cond: 'imagePull' },
  { weight: 2, cond: 'crashLoop' },
  { weight: 1, cond: 'notReady' },
  { weight: 1, cond: 'creating' },
  { weight: 1, cond: 'creatingMount' },
  { weight: 1, cond: 'creatingSandbox' },
  { weight: 1, cond: 'unschedulable' },
  { weight: 1, cond: 'insufficient' },
  { weight: 1, cond: 'unscheduled' },
  { weight: 1, cond: 'pending' },
];

const revArb: fc.Arbitrary<Rev | 'new'> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<'new'>('new') },
  { weight: 1, arbitrary: fc.constantFrom<Rev>(...REVS) },
);
/** Which of the two other revisions (see {@link others}). */
const pickArb: fc.Arbitrary<0 | 1> = fc.constantFrom<0 | 1>(0, 1);
const podGenArb: fc.Arbitrary<PodGen> = fc.record({
  rev: revArb,
  cond: fc.oneof(...CONDS.map((c) => ({ weight: c.weight, arbitrary: fc.constant(c.cond) }))),
  restarts: fc.integer({ min: 1, max: 5 }),
  oom: fc.boolean(),
  readyAgoS: fc.integer({ min: 0, max: 120 }),
  terminating: fc.oneof(
    { weight: 6, arbitrary: fc.constant<'no'>('no') },
    { weight: 1, arbitrary: fc.constantFrom<'inGrace' | 'pastGrace'>('inGrace', 'pastGrace') },
  ),
});
const podsArb: fc.Arbitrary<PodGen[]> = fc.oneof(
  { weight: 6, arbitrary: podGenArb.map((p) => [p]) },
  { weight: 1, arbitrary: fc.constant<PodGen[]>([]) },
  // An old pod on its way out beside the new one, or both live (a surge).
  {
    weight: 2,
    arbitrary: fc.tuple(podGenArb, podGenArb, fc.boolean(), pickArb).map(([a, b, oldGoing, pick]): PodGen[] => [
      { ...a, terminating: oldGoing ? (a.terminating === 'no' ? 'inGrace' : a.terminating) : 'no' },
      { ...b, rev: a.rev === 'new' ? 'A' : others(a.rev)[pick], terminating: 'no' },
    ]),
  },
);
const healthArb: fc.Arbitrary<Health> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Health>('Ready') },
  { weight: 1, arbitrary: fc.constant<Health>('NotReady') },
  { weight: 1, arbitrary: fc.constant<Health>('Unknown') },
  { weight: 1, arbitrary: fc.constant<Health>('Pressure') },
);
/** Usually null (keep what was there), shrinking towards it. */
const keep = <T>(arb: fc.Arbitrary<T>, keepWeight = 3): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: keepWeight, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
const nodeChangeArb: fc.Arbitrary<NodeChange> = fc.record({
  health: keep(healthArb, 5),
  maintenance: keep(fc.boolean(), 8),
  lifecycleTaint: keep(fc.boolean(), 3),
  pods: keep(podsArb, 2),
});
const MAX_NODES = 6;
const stepArb: fc.Arbitrary<StepGen> = fc.record({
  dtS: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 20 }) },
    { weight: 3, arbitrary: fc.integer({ min: 21, max: 240 }) },
    { weight: 2, arbitrary: fc.integer({ min: 241, max: 900 }) },
  ),
  event: fc.oneof(
    { weight: 10, arbitrary: fc.constant<'none'>('none') },
    { weight: 2, arbitrary: fc.constant<'flip'>('flip') },
    { weight: 2, arbitrary: fc.constant<'converge'>('converge') },
  ),
  flipTo: pickArb,
  controllerLags: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  cacheLag: fc.oneof(
    { weight: 4, arbitrary: fc.constant<'none'>('none') },
    { weight: 1, arbitrary: fc.constantFrom<'revisions' | 'daemonSet'>('revisions', 'daemonSet') },
  ),
  staleCounters: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  warning: keep(fc.constantFrom<Warn>('none', 'admission', 'quotaRequests', 'quotaPods', 'staleAdmission', 'other'), 8),
  nodes: fc.array(nodeChangeArb, { minLength: MAX_NODES, maxLength: MAX_NODES }),
});
const healthyStart: NodeChange = {
  health: 'Ready',
  maintenance: false,
  lifecycleTaint: false,
  pods: [{ rev: 'A', cond: 'ok', restarts: 1, oom: false, readyAgoS: 0, terminating: 'no' }],
};
/** A scenario whose guard's onStall.action is one of `actions` and whose steps come from `steps`. */
const scenarioWith = (actions: ReadonlyArray<'Undo' | 'Report'>, steps: fc.Arbitrary<StepGen[]>): fc.Arbitrary<Scenario> =>
  fc.record({
    nodeCount: fc.integer({ min: 1, max: MAX_NODES }),
    gpu: fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }), {
      minLength: MAX_NODES,
      maxLength: MAX_NODES,
    }),
    bDropsToleration: fc.boolean(),
    bChangesVolume: fc.boolean(),
    minReadySeconds: fc.constantFrom(0, 0, 10, 60),
    spec: fc
      .record({
        action: fc.constantFrom(...actions),
        delaySeconds: fc.constantFrom(0, 0, 30),
        suspect: fc.constantFrom(10, 30, 60, 120),
        deadline: fc.constantFrom(60, 120, 300, 600),
        failedNodesThreshold: fc.constantFrom(1, 2, 2, 3),
        bakeSeconds: fc.constantFrom(0, 30, 180),
      })
      // The CRD refuses suspectAfterSeconds >= progressDeadlineSeconds.
      .map((s) => ({ ...s, suspect: Math.min(s.suspect, s.deadline / 2) })),
    initial: fc.oneof(
      { weight: 3, arbitrary: fc.constant(Array.from({ length: MAX_NODES }, () => healthyStart)) },
      { weight: 1, arbitrary: fc.array(nodeChangeArb, { minLength: MAX_NODES, maxLength: MAX_NODES }) },
    ),
    steps,
  });
const scenarioArb: fc.Arbitrary<Scenario> = scenarioWith(
  ['Undo', 'Undo', 'Undo', 'Report'],
  fc.array(stepArb, { minLength: 1, maxLength: 28 }),
);

/*
 * Sequences of broken releases. In scenarioArb an undo is rare (well under one per sequence), so two undos
 * of different revisions followed by the first one applied again (B → undo → C → undo → B) would almost
 * never come up. Here a sequence is mostly made of releases that break: a flip to one of the two other
 * revisions whose new pod fails on a Ready node, then a few steps of time passing in which the nodes mostly
 * stay as they are (sometimes changing as in scenarioArb), so the rollout stalls and the guard, in Undo
 * mode, undoes it; plain steps of scenarioArb come between the releases.
 */
const UNCHANGED: NodeChange = { health: null, maintenance: null, lifecycleTaint: null, pods: null };
const failingPodArb: fc.Arbitrary<PodGen> = fc
  .tuple(podGenArb, fc.constantFrom<Cond>('imagePull', 'crashLoop', 'notReady'))
  .map(([p, cond]): PodGen => ({ ...p, rev: 'new', cond, terminating: 'no' }));
/** Time passing after a release: no flip or converge, the nodes mostly left as they are. */
const stallStepArb: fc.Arbitrary<StepGen> = fc
  .tuple(
    stepArb,
    fc.integer({ min: 30, max: 400 }),
    fc.array(fc.oneof({ weight: 4, arbitrary: fc.constant(UNCHANGED) }, { weight: 1, arbitrary: nodeChangeArb }), {
      minLength: MAX_NODES,
      maxLength: MAX_NODES,
    }),
  )
  .map(([st, dtS, nodes]): StepGen => ({ ...st, dtS, event: 'none', nodes }));
const brokenReleaseArb: fc.Arbitrary<StepGen[]> = fc
  .tuple(stepArb, pickArb, failingPodArb, fc.array(stallStepArb, { minLength: 1, maxLength: 4 }))
  .map(([release, flipTo, failing, after]): StepGen[] => [
    {
      ...release,
      event: 'flip',
      flipTo,
      nodes: [{ health: 'Ready', maintenance: false, lifecycleTaint: false, pods: [failing] }, ...release.nodes.slice(1)],
    },
    ...after,
  ]);
const releasesArb: fc.Arbitrary<Scenario> = scenarioWith(
  ['Undo'],
  fc
    .array(fc.oneof({ weight: 3, arbitrary: brokenReleaseArb }, { weight: 1, arbitrary: stepArb.map((st) => [st]) }), {
      minLength: 2,
      maxLength: 7,
    })
    .map((segments) => segments.flat().slice(0, 28)),
);
/** scenarioArb, and as often sequences of broken releases (three revisions undone in turn and re-applied). */
const mixedArb: fc.Arbitrary<Scenario> = fc.oneof(scenarioArb, releasesArb);

// --- From the world to an observation -------------------------------------------------------------------

const GPU_TAINT = 'nvidia.com/gpu=present:NoSchedule';
const MAINTENANCE_TAINT = 'example.com/maintenance=true:NoSchedule';
const LIFECYCLE_TAINT = 'node.kubernetes.io/unreachable:NoSchedule';

function podState(g: PodGen, now: number, template: Rev): PodState {
  const p: PodState = {
    rev: g.rev === 'new' ? template : g.rev,
    cond: g.cond,
    restarts: g.restarts,
    oom: g.oom,
    createdAt: now - sec(g.readyAgoS + 5),
    readySince: g.cond === 'ok' ? now - sec(3600) : now - sec(g.readyAgoS),
  };
  if (g.terminating === 'inGrace') p.deletionAt = now + sec(20);
  if (g.terminating === 'pastGrace') p.deletionAt = now - sec(60);
  return p;
}

function applyNodeChange(n: NodeState, c: NodeChange, now: number, template: Rev): void {
  if (c.health !== null) n.health = c.health;
  if (c.maintenance !== null) n.maintenance = c.maintenance;
  if (c.lifecycleTaint !== null) n.lifecycleTaint = c.lifecycleTaint;
  if (c.pods !== null) n.pods = c.pods.map((g) => podState(g, now, template));
}

/** Taints of the node that the template of `r` does not tolerate. */
function untolerated(n: NodeState, r: Rev, sc: Scenario): string[] {
  const out: string[] = [];
  if (n.gpu && r === 'B' && sc.bDropsToleration) out.push(GPU_TAINT);
  if (n.maintenance) out.push(MAINTENANCE_TAINT);
  if (n.lifecycleTaint && (n.health === 'NotReady' || n.health === 'Unknown')) out.push(LIFECYCLE_TAINT);
  return out;
}
/** The node's own taints, as gather fingerprints them: a node "changed" when these did. */
const fingerprint = (n: NodeState): string =>
  [
    n.gpu ? GPU_TAINT : '',
    n.maintenance ? MAINTENANCE_TAINT : '',
    n.lifecycleTaint && (n.health === 'NotReady' || n.health === 'Unknown') ? LIFECYCLE_TAINT : '',
  ].join('|');

function nodeHealth(n: NodeState): NodeHealth {
  switch (n.health) {
    case 'Ready':
      return health();
    case 'Pressure':
      return health({ pressure: ['MemoryPressure'] });
    case 'NotReady':
      return health({
        ready: 'False',
        reason: 'KubeletNotReady',
        message: 'container runtime network not ready',
        unreachable: n.lifecycleTaint,
      });
    case 'Unknown':
      return { ...deadKubelet(), unreachable: n.lifecycleTaint };
  }
}

const isLive = (p: PodState): boolean => p.deletionAt === undefined;
const readyCond = (c: Cond): boolean => c === 'ok' || c === 'waitMinReady' || c === 'restartedReady';
const availableAt = (p: PodState, now: number, minReadySeconds: number): boolean =>
  isLive(p) && readyCond(p.cond) && (minReadySeconds === 0 || now - p.readySince >= sec(minReadySeconds));

function podView(p: PodState, now: number, sc: Scenario): PodView {
  const hash = HASH_OF[p.rev];
  const createdAt = iso(p.createdAt);
  if (p.deletionAt !== undefined) return deletingPod(hash, p.deletionAt, { createdAt });
  const crash = { container: 'decoder', reason: p.oom ? 'OOMKilled' : 'Error', exitCode: p.oom ? 137 : 1, at: iso(p.createdAt + sec(3)) };
  switch (p.cond) {
    case 'ok':
    case 'waitMinReady':
    case 'restartedReady': {
      const restarted = p.cond === 'restartedReady' ? { restartCount: p.restarts, lastTermination: crash } : {};
      return pod({
        hash,
        createdAt,
        ready: true,
        available: availableAt(p, now, sc.minReadySeconds),
        readySince: iso(p.readySince),
        ...restarted,
      });
    }
    case 'imagePull': {
      const reason = p.restarts % 2 === 0 ? 'ErrImagePull' : 'ImagePullBackOff';
      return pod({
        hash,
        createdAt,
        phase: 'Pending',
        waitingReason: reason,
        waitingMessage: `Back-off pulling image "registry.example/decoder:${hash}"`,
      });
    }
    case 'crashLoop':
      return pod({
        hash,
        createdAt,
        waitingReason: 'CrashLoopBackOff',
        waitingMessage: 'back-off 40s restarting failed container',
        restartCount: p.restarts,
        lastTermination: crash,
      });
    case 'notReady':
      return pod({ hash, createdAt, ready: false });
    case 'creating':
    case 'creatingMount':
    case 'creatingSandbox': {
      const v = pod({ hash, createdAt, phase: 'Pending', waitingReason: 'ContainerCreating', waitingMessage: '' });
      if (p.cond === 'creatingMount')
        v.warning = {
          reason: 'FailedMount',
          message: 'MountVolume.SetUp failed for volume "config" : configmap "decoder-config" not found',
          at: iso(p.createdAt + sec(2)),
        };
      if (p.cond === 'creatingSandbox')
        v.warning = {
          reason: 'FailedCreatePodSandBox',
          message: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox',
          at: iso(p.createdAt + sec(2)),
        };
      return v;
    }
    case 'unschedulable':
      return { ...unschedulablePod(hash, "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."), createdAt };
    case 'insufficient':
      return { ...unschedulablePod(hash, '0/3 nodes are available: 1 Insufficient cpu.'), createdAt };
    case 'unscheduled':
      return { ...unscheduledPod(hash), createdAt };
    case 'pending':
      return pod({ hash, createdAt, phase: 'Pending', ready: false });
  }
}

function warningView(kind: Warn, now: number): WarningView | undefined {
  const at = iso(now);
  switch (kind) {
    case 'none':
      return undefined;
    case 'admission':
      return {
        reason: 'FailedCreate',
        message: `Error creating: pods "${DS_NAME}-x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "decoder" must not set securityContext.privileged=true)`,
        at,
      };
    case 'staleAdmission':
      return {
        reason: 'FailedCreate',
        message: `Error creating: pods "${DS_NAME}-x" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes`,
        at: iso(T0 - sec(7200)),
      };
    case 'quotaRequests':
      return {
        reason: 'FailedCreate',
        message: `Error creating: pods "${DS_NAME}-x" is forbidden: exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=7, limited: requests.cpu=8`,
        at,
      };
    case 'quotaPods':
      return {
        reason: 'FailedCreate',
        message: `Error creating: pods "${DS_NAME}-x" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods=3, limited: pods=3`,
        at,
      };
    case 'other':
      return { reason: 'FailedCreate', message: 'Error creating: Internal error occurred: etcdserver: request timed out', at };
  }
}

/**
 * The ControllerRevision numbers after the controller observed each template of `history` in turn, as the
 * DaemonSet controller numbers them: a template whose hash has no ControllerRevision yet gets one numbered
 * max + 1; a template whose hash has one (a revision applied again, or restored by an undo) has that one
 * renumbered to max + 1, unless it already is the highest.
 */
function revisionNumbers(history: readonly Rev[]): Map<Rev, number> {
  const n = new Map<Rev, number>();
  let max = 0;
  for (const r of history) {
    if (n.get(r) === max) continue;
    n.set(r, ++max);
  }
  return n;
}

/** The config volume's digest in the template of `r` (see Scenario.bChangesVolume). */
const volumeDigest = (r: Rev, sc: Scenario): string => (sc.bChangesVolume && r !== 'A' ? `digest-${r.toLowerCase()}` : 'digest-a');

/** The ControllerRevisions as the controller has them once it observed generation `g`. */
function revisionsAt(w: World, g: number, sc: Scenario): RevisionView[] {
  const out: RevisionView[] = [];
  for (const [r, number] of revisionNumbers(w.history.slice(0, g)))
    out.push({ ...rev(HASH_OF[r], number), volumes: { config: volumeDigest(r, sc) } });
  return out.sort((a, b) => b.revision - a.revision);
}

/** What the DaemonSet controller reports for the template it last observed. */
function counters(w: World, now: number, sc: Scenario): Pick<TargetView, 'desired' | 'current' | 'updated' | 'ready' | 'available'> {
  const ctrl = w.history[w.observedGeneration - 1]!;
  const targets = w.nodes.filter((n) => untolerated(n, ctrl, sc).length === 0);
  const live = (n: NodeState): PodState[] => n.pods.filter(isLive);
  return {
    desired: targets.length,
    current: targets.filter((n) => live(n).length > 0).length,
    updated: targets.filter((n) => live(n).some((p) => p.rev === ctrl)).length,
    ready: targets.filter((n) => live(n).some((p) => readyCond(p.cond))).length,
    available: targets.filter((n) => live(n).some((p) => availableAt(p, now, sc.minReadySeconds))).length,
  };
}

const UID = 'uid-decoder';

/** The observation gather would build for the world at `now`, and whether it shows a cache behind the other. */
function observe(
  w: World,
  step: StepGen | undefined,
  now: number,
  sc: Scenario,
  memory: TargetMemory,
): { obs: Observation; cacheBehind: boolean } {
  const nodes: NodeView[] = [];
  for (const n of w.nodes) {
    const bad = untolerated(n, w.template, sc);
    const nv = withHealth(
      node(
        n.name,
        n.pods.map((p) => podView(p, now, sc)),
        bad.length === 0,
        bad.length > 0 ? `untolerated taint ${bad[0]}` : undefined,
      ),
      nodeHealth(n),
    );
    nodes.push(nv);
  }
  const c =
    step?.staleCounters && w.lastDs
      ? {
          desired: w.lastDs.desired,
          current: w.lastDs.current,
          updated: w.lastDs.updated,
          ready: w.lastDs.ready,
          available: w.lastDs.available,
        }
      : counters(w, now, sc);
  let target: Partial<TargetView> = {
    generation: w.generation,
    observedGeneration: w.observedGeneration,
    templateGeneration: String(w.generation),
    minReadySeconds: sc.minReadySeconds,
    images: [`registry.example/decoder:${HASH_OF[w.template]}`],
    ...c,
  };
  if (w.undoRecord) target.undoRecord = { ...w.undoRecord };
  if (w.warning?.view) target.warning = { ...w.warning.view };
  let revisions = revisionsAt(w, w.observedGeneration, sc);
  const observed = w.observedGeneration >= w.generation;
  // One watch event behind, on the first pass after a template change.
  // One watch event behind after a template change, for as long as the generator says so (a pass decide
  // sets aside leaves the change pending, so the next step may show it behind again).
  let cacheBehind = false;
  if (w.changedSinceLastPass && observed && step?.cacheLag === 'revisions') {
    revisions = revisionsAt(w, w.generation - 1, sc);
    cacheBehind = true;
  }
  if (w.changedSinceLastPass && observed && step?.cacheLag === 'daemonSet' && w.lastDs) {
    target = { ...w.lastDs };
    cacheBehind = true;
  }
  const settled = (target.observedGeneration ?? 0) >= (target.generation ?? 0) && nodes.filter((n) => n.eligible).length === target.desired;
  const prints = new Map(w.nodes.map((n) => [n.name, fingerprint(n)] as const));
  const { left } = memory.diff(UID, nodes, new Set(w.nodes.map((n) => n.name)), settled, prints);
  return {
    obs: targetObs({ target, nodes: nodes.filter((n) => n.eligible || n.pods.length > 0), revisions, leftNodes: left }),
    cacheBehind,
  };
}

// --- Running a scenario ---------------------------------------------------------------------------------

/** One reconcile pass: what decide saw, what it said, and the world the generator knew it to be. */
interface Pass {
  i: number;
  at: number;
  event: string;
  obs: Observation;
  /** The observation showed the DaemonSet or the ControllerRevision cache behind the other. */
  cacheBehind: boolean;
  prev: GuardStatus;
  /** How long decide had been setting passes aside for disagreeing caches (its last input). */
  cacheWaitMs: number;
  decision: Decision;
  /** The act step's outcome of the pass's Undo. */
  acted?: 'Applied' | 'AlreadyAtTarget';
  world: {
    template: Rev;
    generation: number;
    observedGeneration: number;
    appliedAt: Record<Rev, number>;
    warning?: { kind: Warn; at: number };
    nodes: NodeState[];
  };
}

function guardPolicy(sc: Scenario): GuardPolicy {
  const s = sc.spec;
  return policy({
    suspectAfterSeconds: s.suspect,
    progressDeadlineSeconds: s.deadline,
    failedNodesThreshold: s.failedNodesThreshold,
    bakeSeconds: s.bakeSeconds,
    onStall: { action: s.action, delaySeconds: s.delaySeconds },
  });
}

/** Feeds the scenario through decide pass after pass, as the reconciler does (see the top of this file). */
function simulate(sc: Scenario): Pass[] {
  const pol = deepFreeze(guardPolicy(sc));
  const memory = new TargetMemory();
  const waits = new CacheWait();
  let at = T0;
  const w: World = {
    template: 'A',
    generation: 1,
    observedGeneration: 1,
    history: ['A'],
    appliedAt: { A: T0 - sec(3600), B: -Infinity, C: -Infinity },
    changedSinceLastPass: false,
    nodes: Array.from({ length: sc.nodeCount }, (_, k): NodeState => ({
      name: `node-${k + 1}`,
      health: 'Ready',
      maintenance: false,
      lifecycleTaint: false,
      gpu: sc.gpu[k]!,
      pods: [],
    })),
  };
  w.nodes.forEach((n, k) => applyNodeChange(n, sc.initial[k]!, at, 'A'));
  const flip = (to: Rev, now: number): void => {
    w.template = to;
    w.generation++;
    w.history.push(to);
    w.appliedAt[to] = now;
    w.changedSinceLastPass = true;
  };

  let prev: GuardStatus = {};
  const passes: Pass[] = [];
  let pendingUndo: DaemonSetUndoRecord | undefined;
  for (let i = 0; i <= sc.steps.length; i++) {
    const step = i === 0 ? undefined : sc.steps[i - 1]!;
    let event = i === 0 ? 'start' : 'none';
    if (step) {
      at += sec(step.dtS);
      if (pendingUndo) {
        // The undo patch: the restored template and the record, in one write. The record is written as
        // src/k8s/daemonSetUndo.ts writes it (every hash undone on the DaemonSet, from the record it read),
        // and read back from the annotation's JSON.
        flip(revOfHash(pendingUndo.to), Date.parse(pendingUndo.at));
        w.undoRecord = roundTrip({ ...pendingUndo, undone: withUndone(undoneOn(w.undoRecord), pendingUndo.from) });
        pendingUndo = undefined;
        event = 'undo applied';
      }
      if (step.event === 'flip') {
        flip(others(w.template)[step.flipTo], at);
        event = event === 'none' ? `flip to ${w.template}` : `${event}, flip to ${w.template}`;
      }
      w.nodes.forEach((n, k) => applyNodeChange(n, step.nodes[k]!, at, w.template));
      if (step.event === 'converge') {
        for (const n of w.nodes)
          n.pods =
            untolerated(n, w.template, sc).length === 0
              ? [{ rev: w.template, cond: 'ok', restarts: 0, oom: false, createdAt: at - sec(3600), readySince: at - sec(3600) }]
              : [];
        event = event === 'none' ? 'converge' : `${event}, converge`;
      }
      if (!step.controllerLags) w.observedGeneration = w.generation;
      if (step.warning !== null) {
        const view = warningView(step.warning, at);
        w.warning = view ? { kind: step.warning, view } : undefined;
      }
    }
    const { obs, cacheBehind } = observe(w, step, at, sc, memory);
    const cacheWaitMs = waits.waitedMs(at);
    const decision = decide(deepFreeze(structuredClone(obs)), deepFreeze(structuredClone(prev)), pol, at, { cacheWaitMs });
    waits.record(decision.deferred === true, at);
    if (!decision.deferred) memory.commit();
    passes.push({
      i,
      at,
      event,
      obs,
      cacheBehind,
      prev,
      cacheWaitMs,
      decision,
      world: {
        template: w.template,
        generation: w.generation,
        observedGeneration: w.observedGeneration,
        appliedAt: { ...w.appliedAt },
        ...(w.warning ? { warning: { kind: w.warning.kind, at: Date.parse(w.warning.view.at) } } : {}),
        nodes: structuredClone(w.nodes),
      },
    });
    if (obs.kind === 'Target' && !decision.deferred) w.lastDs = obs.target;
    if (!decision.deferred) w.changedSinceLastPass = false;

    // act + persist
    let status = decision.status;
    if (decision.action?.kind === 'Undo') {
      // The act step reads the DaemonSet afresh: a template that is already the one the undo restores (a
      // flip back to it that the observation did not show yet) is left as it is, without a record, as
      // daemonSetUndo does (AlreadyAtTarget); the patch would change nothing, and bump no generation.
      const atTarget = HASH_OF[w.template] === decision.action.toHash;
      status = recordUndoOutcome(status, atTarget ? { kind: 'AlreadyAtTarget' } : { kind: 'Applied' }, at + 500, pol.generation).status;
      if (!atTarget) pendingUndo = decision.action.record;
      passes[passes.length - 1]!.acted = atTarget ? 'AlreadyAtTarget' : 'Applied';
    } else if (decision.action?.kind === 'DryRunUndo') {
      status = recordDryRun(status, { kind: 'Accepted' });
    }
    prev = roundTrip(status);
  }
  return passes;
}

// --- Reading a trace ------------------------------------------------------------------------------------

const HEALTHY: Health = 'Ready';

function fmtPod(p: PodState): string {
  const extra = p.cond === 'restartedReady' || p.cond === 'crashLoop' ? `×${p.restarts}${p.oom ? ' OOM' : ''}` : '';
  return `${p.rev}:${p.cond}${extra}${p.deletionAt !== undefined ? ' (terminating)' : ''}`;
}
/** A readable account of the passes up to `upTo`, for assertion messages. */
function trail(passes: readonly Pass[], upTo: number): string {
  return passes
    .slice(0, upTo + 1)
    .map((p) => {
      const w = p.world;
      const nodes = w.nodes
        .map(
          (n) =>
            `${n.name} ${n.health}${n.maintenance ? '+maint' : ''}${n.lifecycleTaint ? '+lctaint' : ''}${n.gpu ? '+gpu' : ''} [${n.pods.map(fmtPod).join(', ')}]`,
        )
        .join('; ');
      const d = p.decision;
      const curHash = p.obs.kind === 'Target' ? p.obs.currentRevision?.hash : undefined;
      const cur = curHash !== undefined ? revOfHash(curHash) : '-';
      const counts = p.obs.kind === 'Target' ? `D${p.obs.target.desired} U${p.obs.target.updated} A${p.obs.target.available}` : '';
      const undone =
        p.obs.kind === 'Target' && p.obs.target.undoRecord
          ? ` record undone [${undoneOn(p.obs.target.undoRecord).map(revOfHash).join(',')}]`
          : '';
      const action = d.action
        ? ` ACTION ${d.action.kind}${d.action.kind === 'Undo' ? ` ${revOfHash(d.action.fromHash)}→${revOfHash(d.action.toHash)}${p.acted === 'AlreadyAtTarget' ? ' (already at target)' : ''}` : ''}`
        : '';
      return (
        `  #${p.i} +${(p.at - T0) / 1000}s ${p.event}: template ${w.template} gen ${w.generation}/${w.observedGeneration} current ${cur} ${counts}${undone}` +
        `${w.warning ? ` warning ${w.warning.kind}` : ''} | ${nodes}\n      → ${d.deferred ? 'deferred' : `${String(d.status.state)} ${String(d.status.cause)}/${String(d.status.owner)}`}${action}`
      );
    })
    .join('\n');
}

const targetOf = (o: Observation): Extract<Observation, { kind: 'Target' }> => {
  assert.equal(o.kind, 'Target');
  return o;
};

/** The node's own conditions say nothing is wrong with it: Ready, not tainted by the lifecycle controller, no pressure. */
const nodeIsReady = (h: NodeHealth | undefined): boolean =>
  h !== undefined && h.ready === 'True' && !h.unreachable && (h.pressure ?? []).length === 0;

/**
 * Whether the generator built this pod to fail for a reason of its own template, as the domain lists them
 * (docs/states-and-causes.md, "Whose fault": an image that cannot be pulled, a crash loop or an OOM kill, a config error, requests
 * beyond the node or a placement it cannot satisfy, readiness failing, a restart after starting, a volume the
 * new revision added or changed that does not mount). Not the revision's: waiting out minReadySeconds, a pod
 * no scheduler looked at, a sandbox the node cannot create, a plain Pending or ContainerCreating.
 */
function failsByItsTemplate(p: PodState, now: number, sc: Scenario): boolean {
  if (!isLive(p)) return false;
  switch (p.cond) {
    case 'imagePull':
    case 'crashLoop':
    case 'notReady':
    case 'unschedulable':
    case 'insufficient':
      return true;
    case 'restartedReady':
      return !availableAt(p, now, sc.minReadySeconds);
    case 'creatingMount':
      return sc.bChangesVolume;
    default:
      return false;
  }
}

/** Target nodes whose live pods are all of `hash`, one of them available: "nodes on the target revision". */
function nodesOnRevision(obs: Extract<Observation, { kind: 'Target' }>, hash: string): number {
  return obs.nodes.filter((n) => {
    const live = n.pods.filter((p) => !p.deleting);
    return n.eligible && live.length > 0 && live.every((p) => p.hash === hash) && live.some((p) => p.available);
  }).length;
}

const CRD = parseYaml(readFileSync(new URL('../../../../config/crd/rolloutguards.yaml', import.meta.url), 'utf8')) as {
  spec: {
    versions: Array<{ schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, { enum?: string[] }> } } } } }>;
  };
};
const STATUS_SCHEMA = CRD.spec.versions[0]!.schema.openAPIV3Schema.properties.status.properties;

// --- The properties ---------------------------------------------------------------------------------------

describe('decide: properties over generated sequences of observations (fast-check)', () => {
  /*
   * 1. For every Undo action decide plans in a sequence, its fromHash was never the fromHash of an earlier
   *    Undo of the same sequence: not while the undo converges, not when it stalls, and not when the
   *    broken revision is applied again later (the generator's "flip" after an undo, a GitOps tool
   *    re-applying it, possibly before any pass saw the undo take effect).
   *
   *    Also with a third revision: B undone, then C undone (lastUndo and the DaemonSet record's `from` now
   *    name C), then B applied again (or any permutation of the three) is not undone a second time. This
   *    held only for two revisions until status.undoneRevisions (recordUndoOutcome) and the DaemonSet
   *    record's `undone` list (written by daemonSetUndo, read by plan.ts's undoBlocker) remembered every
   *    undone hash, not only the latest (commit 2621189). The generator covers the case with its third
   *    revision C; `undoneBackAfterAnotherUndo` counts the sequences that reach it, and
   *    `secondUndoRefused` those where decide then holds a Stalled/Failed verdict blaming the revision in
   *    Undo mode and refuses with AlreadyUndone, i.e. where only that memory stands between it and a
   *    second undo.
   */
  it('1. never two undos of one revision: at most one Undo per broken hash over a sequence, also after the undo is applied and the broken revision is observed again', (t) => {
    const seen = {
      sequences: 0,
      undos: 0,
      undosAlreadyAtTarget: 0,
      brokenBackAfterUndo: 0,
      undoneBackAfterAnotherUndo: 0,
      secondUndoRefused: 0,
    };
    /** Of undoneBackAfterAnotherUndo, by order: "BCB" is B undone, then C undone, then B current again. */
    const orders: Record<string, number> = {};
    const checked = check(mixedArb, 1000, (sc) => {
      const passes = simulate(sc);
      // In the order of the undos.
      const undoneAtGeneration = new Map<string, number>();
      let back = false;
      let backAfterAnother: string | undefined;
      let refused = false;
      seen.sequences++;
      for (const p of passes) {
        const obs = targetOf(p.obs);
        const cur = obs.currentRevision?.hash;
        // The undone revision current again, in a generation after the one the undo restored.
        const undoneAt = cur !== undefined ? undoneAtGeneration.get(cur) : undefined;
        if (cur !== undefined && undoneAt !== undefined && p.world.template === revOfHash(cur)) {
          if (obs.target.generation > undoneAt + 1) back = true;
          // …and another revision undone after it, then it applied again after that undo too.
          for (const [other, otherAt] of undoneAtGeneration) {
            if (other === cur || otherAt < undoneAt || obs.target.generation <= otherAt + 1) continue;
            backAfterAnother ??= `${revOfHash(cur)}${revOfHash(other)}${revOfHash(cur)}`;
            const s = p.decision.status;
            if (
              sc.spec.action === 'Undo' &&
              (s.state === 'Stalled' || s.state === 'Failed') &&
              s.owner === 'Revision' &&
              s.undoSkipped?.reason === 'AlreadyUndone'
            )
              refused = true;
          }
        }
        const a = p.decision.action;
        if (a?.kind !== 'Undo') continue;
        seen.undos++;
        if (p.acted === 'AlreadyAtTarget') seen.undosAlreadyAtTarget++;
        assert.ok(
          !undoneAtGeneration.has(a.fromHash),
          `a second Undo of revision ${revOfHash(a.fromHash)} (${a.fromHash}) at pass #${p.i}:\n${trail(passes, p.i)}`,
        );
        undoneAtGeneration.set(a.fromHash, p.world.generation);
      }
      if (back) seen.brokenBackAfterUndo++;
      if (backAfterAnother !== undefined) {
        seen.undoneBackAfterAnotherUndo++;
        orders[backAfterAnother] = (orders[backAfterAnother] ?? 0) + 1;
      }
      if (refused) seen.secondUndoRefused++;
    });
    t.diagnostic(`coverage: ${JSON.stringify(seen)}, undone back after another undo by order: ${JSON.stringify(orders)}`);
    // Undos happen, undone revisions are observed again afterwards, also after another revision's undo
    // (B → undo → C → undo → B and its permutations), and decide is then about to undo them again.
    covered(seen, { undos: 40, brokenBackAfterUndo: 5, undoneBackAfterAnotherUndo: 20, secondUndoRefused: 12 }, 1000, checked);
  });

  /*
   * 2. Whenever decision.action is an Undo of revision R (fromHash):
   *    - status.owner is 'Revision' and status.state is Stalled or Failed; and
   *    - the observations show R at fault by one of the kinds of evidence the domain accepts
   *      (attribute.ts, plan.ts, evidence.ts, warnings.ts), judged from what the generator built, not
   *      from decide's output:
   *      (a) a target node that is Ready (no pressure, no lifecycle taint) runs a live pod of R that fails
   *          by its own template (see failsByItsTemplate) and no available pod of R;
   *      (b) the DaemonSet's latest FailedCreate is the API server refusing the pod for what the template
   *          asks (admission, or a quota exceeded by its requests, not by the pod count), dated no earlier
   *          than R last became the template (less the 2 s slack for Event times);
   *      (c) the state is Failed and, over the observations so far, pods of R restarted on at least
   *          failedNodesThreshold distinct nodes while those nodes were Ready without pressure;
   *      (d) R no longer tolerates a taint of nodes that did not change (B dropping the gpu toleration).
   *    (a)–(d) over-approximate the domain's rules where it is cheaper (any age of a pod's Event, crashes
   *    from any earlier rollout of R), which only makes the property weaker, never wrong.
   */
  it('2. never an undo the evidence does not blame on the revision: owner Revision, and the broken revision fails on a Ready node, is refused by the API server, crashed on failedNodesThreshold Ready nodes, or stopped tolerating an unchanged node', (t) => {
    const by = { readyNode: 0, refusal: 0, crashes: 0, shrink: 0 };
    const checked = check(mixedArb, 1000, (sc) => {
      const passes = simulate(sc);
      // Per hash, the nodes seen Ready (no pressure) with a restarted pod of it, over every observation so far.
      const crashedOn = new Map<string, Set<string>>();
      for (const p of passes) {
        const obs = targetOf(p.obs);
        for (const n of obs.nodes) {
          if (!nodeIsReady(n.health)) continue;
          for (const q of n.pods) if (q.restartCount > 0) crashedOn.set(q.hash, (crashedOn.get(q.hash) ?? new Set()).add(n.node));
        }
        const a = p.decision.action;
        if (a?.kind !== 'Undo') continue;
        const s = p.decision.status;
        const where = `Undo of ${revOfHash(a.fromHash)} at pass #${p.i}:\n${trail(passes, p.i)}`;
        assert.equal(s.owner, 'Revision', `owner ${String(s.owner)}: ${where}`);
        assert.ok(s.state === 'Stalled' || s.state === 'Failed', `state ${String(s.state)}: ${where}`);
        const broken = revOfHash(a.fromHash);
        const w = p.world;
        const readyNode = w.nodes.some(
          (n) =>
            n.health === HEALTHY &&
            untolerated(n, w.template, sc).length === 0 &&
            n.pods.some((q) => q.rev === broken && failsByItsTemplate(q, p.at, sc)) &&
            !n.pods.some((q) => q.rev === broken && availableAt(q, p.at, sc.minReadySeconds)),
        );
        const refusal =
          w.warning !== undefined &&
          (w.warning.kind === 'admission' || w.warning.kind === 'quotaRequests') &&
          w.warning.at >= w.appliedAt[broken] - 2000;
        const crashes = s.state === 'Failed' && (crashedOn.get(a.fromHash)?.size ?? 0) >= sc.spec.failedNodesThreshold;
        const shrink = broken === 'B' && sc.bDropsToleration && w.nodes.some((n) => n.gpu);
        assert.ok(readyNode || refusal || crashes || shrink, `no evidence against revision ${broken}: ${where}`);
        if (readyNode) by.readyNode++;
        else if (refusal) by.refusal++;
        else if (crashes) by.crashes++;
        else by.shrink++;
      }
    });
    t.diagnostic(`undos by first evidence: ${JSON.stringify(by)}`);
    covered(by, { readyNode: 15, crashes: 3 }, 1000, checked);
  });

  /*
   * 3. Progress, as the domain defines it (docs/states-and-causes.md, "Progress means any high-water mark going up"), read
   *    from the observations: a run is the consecutive passes decide judged (not set aside) with the same
   *    current revision. On a pass where the controller has observed the DaemonSet's generation, if
   *    - the target nodes whose live pods are all of the current revision, one of them available, or
   *    - the DaemonSet's updated or available count (counted only on observed passes: before that they
   *      describe the previous template)
   *    exceed every earlier value in the run, the state is neither Suspect nor Stalled. (Failed may be
   *    given during progress: it rests on crashes, not on time. A flapping count that only returns to an
   *    earlier height is not progress.)
   *    Not checked on a pass whose observation shows one cache behind the other that decide took anyway
   *    (past its 30 s wait): there the counters describe another template than the current revision, so
   *    they say nothing about its progress. Such a pass still raises the run's maxima, as it raises
   *    decide's marks. (Found as a counterexample of the first statement: a revision cache four minutes
   *    behind an undo, the counters of the restored template rising, read against the broken revision.)
   */
  it('3. never Suspect or Stalled on a pass that shows progress: more nodes on the current revision, or a higher updated or available count, than any earlier pass on it', (t) => {
    const seen = { checked: 0, progress: 0, progressAfterSuspectOrStalled: 0 };
    const checked = check(mixedArb, 1000, (sc) => {
      const passes = simulate(sc);
      let run: { hash: string; onRevision: number; updated: number; available: number } | undefined;
      for (const p of passes) {
        if (p.decision.deferred) continue;
        const obs = targetOf(p.obs);
        const hash = obs.currentRevision?.hash;
        if (hash === undefined) continue;
        const observed = obs.target.observedGeneration >= obs.target.generation;
        const cur = {
          hash,
          onRevision: nodesOnRevision(obs, hash),
          updated: observed ? obs.target.updated : -1,
          available: observed ? obs.target.available : -1,
        };
        if (run?.hash === hash && observed && !p.cacheBehind) {
          seen.checked++;
          if (cur.onRevision > run.onRevision || cur.updated > run.updated || cur.available > run.available) {
            seen.progress++;
            if (p.prev.state === 'Suspect' || p.prev.state === 'Stalled') seen.progressAfterSuspectOrStalled++;
            const st = p.decision.status.state;
            assert.ok(
              st !== 'Suspect' && st !== 'Stalled',
              `${String(st)} (${String(p.decision.status.cause)}/${String(p.decision.status.owner)}) on a pass with progress (${JSON.stringify(cur)} after ${JSON.stringify(run)}) at pass #${p.i}:\n${trail(passes, p.i)}`,
            );
          }
        }
        run =
          run?.hash === hash
            ? {
                hash,
                onRevision: Math.max(run.onRevision, cur.onRevision),
                updated: Math.max(run.updated, cur.updated),
                available: Math.max(run.available, cur.available),
              }
            : cur;
      }
    });
    t.diagnostic(`coverage: ${JSON.stringify(seen)}`);
    covered(seen, { progress: 300, progressAfterSuspectOrStalled: 30 }, 1000, checked);
  });

  /*
   * 4. decide(obs, prev, policy, now, { cacheWaitMs }) called again on copies of the same inputs gives a deep-equal
   *    decision, and leaves its inputs as they were: every pass of simulate already hands decide
   *    deep-frozen inputs (a write throws), and the second call gets unfrozen copies compared afterwards.
   */
  it('4. the status is always rebuilt the same from the same inputs, and decide never mutates them', () => {
    check(mixedArb, 500, (sc) => {
      const passes = simulate(sc);
      for (const p of passes) {
        const inputs = { obs: structuredClone(p.obs), prev: structuredClone(p.prev), policy: guardPolicy(sc) };
        const before = structuredClone(inputs);
        const again = decide(inputs.obs, inputs.prev, inputs.policy, p.at, { cacheWaitMs: p.cacheWaitMs });
        assert.deepEqual(again, p.decision, `a different decision from the same inputs at pass #${p.i}:\n${trail(passes, p.i)}`);
        assert.deepEqual(inputs, before, `decide changed its inputs at pass #${p.i}:\n${trail(passes, p.i)}`);
      }
    });
  });

  /*
   * 5. status.state, status.cause and status.owner are always values the CRD's schema enumerates (read
   *    from config/crd/rolloutguards.yaml), the status is plain JSON (what is written is what is read
   *    back: no undefined-valued keys), and requeueAfterMs, when set, is finite and > 0.
   */
  it("5. the state, cause and owner are always values of the CRD's enums, the status is plain JSON, and a requeue is always > 0 and finite", () => {
    const states = STATUS_SCHEMA['state']!.enum!;
    const causes = STATUS_SCHEMA['cause']!.enum!;
    const owners = STATUS_SCHEMA['owner']!.enum!;
    assert.ok(states.length >= 10 && causes.length > 10 && owners.length > 5, 'the CRD lists the enums');
    check(mixedArb, 500, (sc) => {
      const passes = simulate(sc);
      for (const p of passes) {
        const d = p.decision;
        const where = `at pass #${p.i}:\n${trail(passes, p.i)}`;
        assert.ok(states.includes(String(d.status.state)), `state ${String(d.status.state)} ${where}`);
        if (d.status.cause !== undefined) assert.ok(causes.includes(d.status.cause), `cause ${d.status.cause} ${where}`);
        if (d.status.owner !== undefined) assert.ok(owners.includes(d.status.owner), `owner ${d.status.owner} ${where}`);
        assert.deepEqual(roundTrip(d.status), d.status, `status is not plain JSON ${where}`);
        if (d.requeueAfterMs !== undefined)
          assert.ok(Number.isFinite(d.requeueAfterMs) && d.requeueAfterMs > 0, `requeueAfterMs ${d.requeueAfterMs} ${where}`);
      }
    });
  });
});
