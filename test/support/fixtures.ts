/**
 * Builders for domain tests: DaemonSet views, pods, nodes, observations and guard specs with the
 * defaults a freshly created RolloutGuard gets, plus `run`, which simulates successive reconcile passes
 * over a fake clock (plain millisecond numbers) by feeding `decide` its own previous status.
 *
 * Everything returned is fresh plain data; `run` deep-freezes what it hands to `decide`, so a test
 * fails loudly if the pure code ever mutates its inputs.
 */
import { decide } from '../../src/domain/decide/decide.js';
import type { GuardPolicy } from '../../src/domain/decide/pass.js';
import type { TargetView, GuardPeer, NodeView, Observation, PodView, RevisionView } from '../../src/domain/observation.js';
import type { NodeHealth, SlimPod } from '../../src/api/objects.js';
import type { Decision } from '../../src/domain/decision.js';
import type { CauseClass, GuardSpec, GuardStatus, LeftNode } from '../../src/api/types.js';

/** The DaemonSet every guard in these tests watches. */
export const DS_NAME = 'decoder';

/** A fixed, readable epoch for the fake clock: 2025-01-01T00:00:00Z. */
export const T0 = Date.parse('2025-01-01T00:00:00.000Z');

/** Seconds → milliseconds, so test timelines read like the spec fields they exercise. */
export const sec = (s: number): number => s * 1000;

/** ISO form of a fake-clock instant, as decide writes it into status. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** Pod-template hashes used across tests: A is the good revision, B the broken one, C a third. */
export const HASH = { A: 'aaa111', B: 'bbb222', C: 'ccc333' } as const;

// Every cause class, as a record so that tsc lists a class added to CauseClass here.
const CAUSES: Record<CauseClass, true> = {
  ImagePullFailure: true,
  InsufficientResources: true,
  Unschedulable: true,
  CrashLoop: true,
  OOMKilled: true,
  NotReady: true,
  TargetShrank: true,
  NoNodesMatched: true,
  NodeNotReady: true,
  NodePressure: true,
  PodTerminating: true,
  ControllerNotObserving: true,
  ControllerNotActing: true,
  SchedulerNotActing: true,
  MinReadySeconds: true,
  AdmissionRefused: true,
  QuotaExceeded: true,
  VolumeMountFailure: true,
  VolumeClaimUnavailable: true,
  SandboxFailure: true,
  Unknown: true,
};
/** Every cause class. */
export const CAUSE_CLASSES = Object.keys(CAUSES) as CauseClass[];

/** A ControllerRevision view: name `<target>-<hash>`, as the DaemonSet controller names it. */
export function rev(hash: string, revision: number): RevisionView {
  return { name: `${DS_NAME}-${hash}`, hash, revision };
}

/** Guard spec with the CRD defaults; `onStall` may be given partially. */
export function spec(overrides: Partial<Omit<GuardSpec, 'onStall'>> & { onStall?: Partial<GuardSpec['onStall']> } = {}): GuardSpec {
  const { onStall, ...rest } = overrides;
  return {
    targetRef: { kind: 'DaemonSet', name: DS_NAME },
    suspectAfterSeconds: 120,
    progressDeadlineSeconds: 600,
    failedNodesThreshold: 2,
    // Most timelines here predate the bake and end at the controller's "complete"; bake tests set it.
    bakeSeconds: 0,
    suspend: false,
    ...rest,
    onStall: { action: 'Report', delaySeconds: 0, forcedRollback: true, ...onStall },
  };
}

/** The policy argument of decide: a spec plus the guard's metadata.generation. */
export function policy(
  s: Partial<Omit<GuardSpec, 'onStall'>> & { onStall?: Partial<GuardSpec['onStall']> } = {},
  generation = 1,
): GuardPolicy {
  return { spec: spec(s), generation, name: DS_NAME, createdAt: iso(T0 - sec(3600)) };
}

/** A DaemonSet view: by default a fully rolled-out 3-node RollingUpdate (maxUnavailable 1) at generation 1. */
export function dsView(overrides: Partial<TargetView> = {}): TargetView {
  return {
    kind: 'DaemonSet',
    name: DS_NAME,
    namespace: 'default',
    uid: 'uid-decoder',
    generation: 1,
    observedGeneration: 1,
    strategy: 'RollingUpdate',
    minReadySeconds: 0,
    desired: 3,
    current: 3,
    updated: 3,
    ready: 3,
    available: 3,
    misscheduled: 0,
    templateGeneration: '1',
    undoOptOut: false,
    images: [`registry.example/decoder:${HASH.A}`],
    ...overrides,
  };
}

/** Options of {@link pod}: the hash is required, everything else describes a healthy running pod. */
export type PodOptions = Partial<PodView> & { hash: string };

/**
 * A daemon pod. Defaults: scheduled, Running, Ready and available. `available` follows `ready` unless
 * given; a pod with a `waitingReason` defaults to not ready. The name is filled in by {@link node}.
 */
export function pod(o: PodOptions): PodView {
  const ready = o.ready ?? o.waitingReason === undefined;
  const p: PodView = {
    name: '',
    ready,
    available: ready,
    deleting: false,
    phase: 'Running',
    scheduled: true,
    restartCount: 0,
    images: [`registry.example/decoder:${o.hash}`],
    createdAt: iso(T0),
    ...o,
  };
  return p;
}

/** A new-revision pod stuck pulling its image. */
export const imagePullPod = (hash: string): PodView =>
  pod({
    hash,
    phase: 'Pending',
    waitingReason: 'ImagePullBackOff',
    waitingMessage: `Back-off pulling image "registry.example/decoder:${hash}"`,
  });

/** A pod whose container keeps crashing. */
export const crashLoopPod = (hash: string): PodView =>
  pod({ hash, waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off 5m0s restarting failed container', restartCount: 7 });

/** A pod the scheduler cannot place (Pending, PodScheduled=False Unschedulable with `message`). */
export const unschedulablePod = (hash: string, message: string): PodView =>
  pod({ hash, phase: 'Pending', scheduled: false, waitingReason: 'Unschedulable', waitingMessage: message });

/** A pod that runs but never passes its readiness probe. */
export const notReadyPod = (hash: string): PodView => pod({ hash, ready: false });

/**
 * A pod of `hash` being deleted: `deletionAt` is its metadata.deletionTimestamp (the moment its grace
 * period ends). Not ready by default, as the node lifecycle controller marks pods on a lost node.
 */
export const deletingPod = (hash: string, deletionAt: number, o: Partial<PodView> = {}): PodView =>
  pod({ hash, deleting: true, deletionAt: iso(deletionAt), ready: false, ...o });

/** A pod Ready since `readySince` (ms) and not yet available: it waits out minReadySeconds. */
export const waitingOutMinReadyPod = (hash: string, readySince: number): PodView =>
  pod({ hash, ready: true, available: false, readySince: iso(readySince) });

/** A Pending pod no scheduler has looked at: no nodeName and no PodScheduled condition. */
export const unscheduledPod = (hash: string): PodView =>
  pod({ hash, phase: 'Pending', scheduled: false, ready: false, schedulingAttempted: false });

/** Node health from the node's Ready condition and taints; defaults to a Ready node. */
export function health(o: Partial<NodeHealth> = {}): NodeHealth {
  return { ready: 'True', ...o };
}

/** A node whose kubelet stopped posting status: Ready Unknown and tainted unreachable by the node lifecycle controller. */
export const deadKubelet = (): NodeHealth =>
  health({ ready: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', unreachable: true });

/** `n` with its health set. */
export function withHealth(n: NodeView, h: NodeHealth): NodeView {
  return { ...n, health: { ...h } };
}

/** A node; pods without a name get `<target>-<hash>-<node>`. */
export function node(name: string, pods: PodView[] = [], eligible = true, ineligibleReason?: string): NodeView {
  const n: NodeView = {
    node: name,
    eligible,
    pods: pods.map((p) => (p.name ? p : { ...p, name: `${DS_NAME}-${p.hash}-${name}` })),
  };
  if (ineligibleReason !== undefined) n.ineligibleReason = ineligibleReason;
  return n;
}

/** An OrderedReady StatefulSet `store` as decide sees it: its controller waits on unready pods. */
export const store = (o: Partial<TargetView> = {}): Partial<TargetView> => ({
  kind: 'StatefulSet',
  name: 'store',
  waitsOnUnreadyPods: true,
  ...o,
});

/** Ordinal `i` of {@link store}: its pod named store-i, with UID `uid-i` unless given, on `host` and with `health` when given. */
export function ordinal(i: number, p: PodView, o: { uid?: string; host?: string; health?: NodeView['health'] } = {}): NodeView {
  return {
    ...node(`store-${i}`, [{ ...p, name: `store-${i}`, uid: o.uid ?? `uid-${i}` }]),
    ordinal: i,
    ...(o.host ? { host: o.host } : {}),
    ...(o.health ? { health: o.health } : {}),
  };
}

/** Options of {@link targetObs}. `currentRevision` defaults to the highest revision (as gather picks it); pass `null` for none. */
export interface TargetObsOptions {
  target?: Partial<TargetView>;
  nodes?: NodeView[];
  revisions?: RevisionView[];
  currentRevision?: RevisionView | null;
  leftNodes?: LeftNode[];
  removedNodes?: string[];
  /** Every guard targeting the DaemonSet (absent: just this one). */
  guards?: GuardPeer[];
}

/** An observation of an existing DaemonSet. */
export function targetObs(o: TargetObsOptions = {}): Observation {
  const revisions = o.revisions ?? [rev(HASH.A, 1)];
  const highest = [...revisions].sort((a, b) => b.revision - a.revision)[0];
  const current = o.currentRevision === null ? undefined : (o.currentRevision ?? highest);
  const obs: Observation = {
    kind: 'Target',
    target: dsView(o.target),
    revisions,
    nodes: o.nodes ?? [],
    leftNodes: o.leftNodes ?? [],
  };
  if (o.removedNodes) obs.removedNodes = o.removedNodes;
  if (o.guards) obs.guards = o.guards.map((g) => ({ ...g }));
  if (current) obs.currentRevision = current;
  return obs;
}

/** The observation when the target DaemonSet does not exist. */
export function missingObs(targetName = DS_NAME): Observation {
  return { kind: 'TargetMissing', targetName };
}

/** `n` nodes `node-1..node-n`, each running one ready pod of `hash`. */
export function nodesOn(hash: string, n = 3): NodeView[] {
  return Array.from({ length: n }, (_, i) => node(`node-${i + 1}`, [pod({ hash })]));
}

/** One pass of the simulation. */
export interface Step {
  obs: Observation;
  /** Fake-clock time of the pass (ms). */
  at: number;
  /** Policy for this pass; defaults to the run's. */
  policy?: GuardPolicy;
  /**
   * What is stored between this pass and the next (the act + persist steps): defaults to the decided
   * status as is. Use it to fold in an undo or dry-run outcome, or to JSON round-trip through "the API".
   */
  persist?: (d: Decision) => GuardStatus;
}

/** Options of {@link run}. */
export interface RunOptions {
  /** Status before the first pass (default: a brand-new guard, `{}`). */
  initial?: GuardStatus;
  /** Default policy for every step. */
  policy?: GuardPolicy;
  /**
   * Each pass is given every unit the one before found blocked (`decision.blocked`), as the operator's
   * memory gives it while it wrote the previous status itself; off, as after a restart.
   */
  remember?: boolean;
}

/**
 * Simulates successive reconcile passes: each step's decide gets the status persisted after the
 * previous step. Returns every decision, in order.
 */
export function run(steps: readonly Step[], opts: RunOptions = {}): Decision[] {
  let prev: GuardStatus = opts.initial ?? {};
  const out: Decision[] = [];
  let blockedBefore: Decision['blocked'];
  for (const s of steps) {
    const remembered = opts.remember && blockedBefore ? { blockedBefore: deepFreeze(structuredClone(blockedBefore)) } : {};
    const d = decide(
      deepFreeze(structuredClone(s.obs)),
      deepFreeze(structuredClone(prev)),
      s.policy ?? opts.policy ?? policy(),
      s.at,
      remembered,
    );
    out.push(d);
    prev = s.persist ? s.persist(d) : d.status;
    blockedBefore = d.blocked;
  }
  return out;
}

/** JSON round trip, as status goes through the API server and back from the informer. */
export function roundTrip<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Recursively freezes a plain object graph and returns it. */
export function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/** Reasons of the events a decision plans, in order. */
export const reasons = (d: Decision): string[] => d.events.map((e) => e.reason);

/** A condition of a status by type; throws when absent so a test never compares against undefined by accident. */
export function cond(s: GuardStatus, type: string): NonNullable<GuardStatus['conditions']>[number] {
  const c = s.conditions?.find((x) => x.type === type);
  if (!c) throw new Error(`condition ${type} not set; have ${JSON.stringify(s.conditions?.map((x) => x.type))}`);
  return c;
}

/** `type=status/reason` for each of the guard's four conditions, for compact assertions. */
export function condSummary(s: GuardStatus): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of s.conditions ?? []) out[c.type] = `${c.status}/${c.reason}`;
  return out;
}

/** A cached pod (SlimPod) of revision `h2` running on node `n`, named `p-<n>`; `o` overrides any field. */
export function slimPod(n: string, o: Partial<SlimPod> = {}): SlimPod {
  return {
    metadata: { name: `p-${n}` },
    node: n,
    scheduled: true,
    hash: 'h2',
    images: ['i'],
    phase: 'Running',
    ready: false,
    restartCount: 0,
    ...o,
  };
}
