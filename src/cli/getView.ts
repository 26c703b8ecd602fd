/**
 * The view of `rollout-guard get`: plain data, built by pure functions from an observation, decide's
 * status for it and the guards read. `--output json` prints it as is; getRender.ts draws it as text.
 */
import { attributeBlocked, attributeEmpty } from '../domain/nodeAttribution.js';
import { computeSplit } from '../domain/split.js';
import type {
  BlockedNode,
  CauseClass,
  EmptyNode,
  FaultOwner,
  GenerationStatus,
  GuardStatus,
  RevisionRef,
  TargetKind,
  UndoPlan,
  UndoRecord,
  UndoSkip,
} from '../api/types.js';
import type { NodeView, Observation, PodView } from '../domain/observation.js';
import type { SlimGuard } from '../api/objects.js';

/** One row of the node table: a daemon pod, or a node that should run one and has none. */
export interface NodeRow {
  /** The unit: a node, or a StatefulSet's ordinal named by its pod. */
  node: string;
  /** For a StatefulSet, the node the pod runs on. */
  host?: string;
  /** The pod's revision number, when its ControllerRevision is known. */
  revision?: number;
  /** The pod's template hash; absent for a node without a pod. */
  hash?: string;
  pod?: string;
  ready: boolean;
  restarts: number;
  /**
   * What the row shows in STATUS: `Running`, `Terminating`, the blocked reason (ImagePullBackOff,
   * CrashLoopBackOff, NodeNotReady …), or an empty node's reason (NoPod, Terminating).
   */
  status: string;
  /** `blocked`: a pod the rollout waits for; `empty`: a node without a pod; `ok` otherwise. */
  kind: 'ok' | 'blocked' | 'empty';
  owner?: FaultOwner;
  cause?: CauseClass;
  /** Why, in the kubelet's, the scheduler's or the attribution's words. */
  message?: string;
  /** The node is not (or no longer) one the DaemonSet should run on, and why. */
  notTarget?: string;
}

/** The DaemonSet's own counters, as `kubectl get ds` shows them. */
/** The target shown (kept under the key `daemonSet` of the JSON view, whatever its kind). */
export interface DaemonSetSummary {
  kind: TargetKind;
  namespace: string;
  name: string;
  found: boolean;
  desired?: number;
  current?: number;
  updated?: number;
  ready?: number;
  available?: number;
  generation?: number;
  observedGeneration?: number;
}

/** What `get rg/NAME` shows of the guard: its status as the operator wrote it. */
export interface GuardSummary {
  namespace: string;
  name: string;
  found: boolean;
  target: string;
  state?: string;
  cause?: string;
  owner?: string;
  message?: string;
  currentRevision?: RevisionRef;
  revisions: GenerationStatus[];
  undoPlan?: UndoPlan;
  lastUndo?: UndoRecord;
  undoSkipped?: UndoSkip;
}

/** A RolloutGuard that targets the DaemonSet, as `get ds/NAME` names it. */
export interface GuardRef {
  name: string;
  state?: string;
  cause?: string;
  owner?: string;
}

/** Everything one render shows; `--output json` prints it as is. */
export interface GetView {
  kind: TargetKind | 'RolloutGuard';
  /** When the observation was made. */
  at: string;
  /** `get rg/NAME`: the guard's status. */
  guard?: GuardSummary;
  /** `get ds/NAME`: the guards that target it, whose state has the history this command lacks. */
  guardedBy?: GuardRef[];
  daemonSet: DaemonSetSummary;
  /** The live judgement of decide over what this command observed (`Waiting` before the controller observed the template). */
  state: string;
  cause?: string;
  owner?: string;
  message?: string;
  currentRevision?: RevisionRef;
  revisions: GenerationStatus[];
  nodes: NodeRow[];
}

/** The guard's status fields `get rg/NAME` shows, from the guard as read. */
export function guardSummary(namespace: string, name: string, g: Readonly<SlimGuard> | undefined, target: string): GuardSummary {
  if (!g) return { namespace, name, found: false, target, revisions: [] };
  const s = g.status ?? {};
  const out: GuardSummary = { namespace, name, found: true, target, revisions: s.generations ? [...s.generations] : [] };
  if (s.state) out.state = s.state;
  if (s.cause) out.cause = s.cause;
  if (s.owner) out.owner = s.owner;
  if (s.message) out.message = s.message;
  if (s.currentRevision) out.currentRevision = { ...s.currentRevision };
  if (s.undoPlan) out.undoPlan = { ...s.undoPlan };
  if (s.lastUndo) out.lastUndo = { ...s.lastUndo };
  if (s.undoSkipped) out.undoSkipped = { ...s.undoSkipped };
  return out;
}

const byRevisionThenNode = (a: NodeRow, b: NodeRow): number => {
  // Newest revision first, rows without a pod last; then the hash (revision unknown), then the node.
  const ra = a.hash === undefined ? -2 : (a.revision ?? -1);
  const rb = b.hash === undefined ? -2 : (b.revision ?? -1);
  return rb - ra || (a.hash ?? '').localeCompare(b.hash ?? '') || a.node.localeCompare(b.node) || (a.pod ?? '').localeCompare(b.pod ?? '');
};

type Target = Extract<Observation, { kind: 'Target' }>;

/** Why a pod blocks the rollout, keyed by {@link blockedKey}, and why a node has no pod, by node. */
interface Explanations {
  blocked: Map<string, BlockedNode>;
  empty: Map<string, EmptyNode>;
}

const blockedKey = (node: string, pod: string | undefined): string => `${node}\u0000${pod ?? ''}`;

/**
 * The blocked and empty nodes of decide's status; status lists stop at 20 nodes, so the rest are
 * attributed here, node by node, with the same functions decide uses.
 */
function explanations(obs: Target, status: GuardStatus, now: number): Explanations {
  const blocked = new Map<string, BlockedNode>();
  const empty = new Map<string, EmptyNode>();
  for (const b of status.blockedNodes ?? []) blocked.set(blockedKey(b.node, b.pod), b);
  for (const e of status.emptyNodes ?? []) empty.set(e.node, e);
  if ((status.blockedNodeCount ?? 0) <= blocked.size && (status.emptyNodeCount ?? 0) <= empty.size) return { blocked, empty };
  const split = computeSplit(obs.nodes, obs.revisions, obs.currentRevision?.hash);
  const byName = new Map(obs.nodes.map((n) => [n.node, n]));
  const named = new Set([...blocked.values()].map((b) => b.node));
  for (const b of split.blocked) {
    if (named.has(b.node)) continue;
    const n = byName.get(b.node);
    blocked.set(
      blockedKey(b.node, b.pod),
      attributeBlocked(
        b,
        n,
        n?.pods.find((p) => p.name === b.pod),
        now,
        obs.target.minReadySeconds,
      ),
    );
  }
  for (const e of split.empty) if (!empty.has(e.node)) empty.set(e.node, attributeEmpty(e, byName.get(e.node), now));
  return { blocked, empty };
}

/** Shows on `row` why its node is blocked or empty. */
function explain(row: NodeRow, why: BlockedNode | EmptyNode): void {
  row.status = why.reason;
  if (why.owner) row.owner = why.owner;
  if (why.cause) row.cause = why.cause;
  if (why.message) row.message = why.message;
}

/** The row of pod `p` on node `n`. */
function podRow(n: NodeView, p: PodView, revision: number | undefined, why: Explanations, notTarget: string | undefined): NodeRow {
  const row: NodeRow = {
    node: n.node,
    ...(n.host !== undefined && p.scheduled ? { host: n.host } : {}),
    ...(revision !== undefined ? { revision } : {}),
    hash: p.hash,
    pod: p.name,
    ready: p.ready,
    restarts: p.restartCount,
    status: 'Running',
    kind: 'ok',
  };
  if (notTarget !== undefined) row.notTarget = notTarget;
  const b = why.blocked.get(blockedKey(n.node, p.name));
  const e = why.empty.get(n.node);
  if (b) {
    row.kind = 'blocked';
    explain(row, b);
  } else if (p.deleting) {
    row.status = 'Terminating';
    // The node has no other pod: the rollout waits for this one to go.
    if (n.pods.every((q) => q.deleting) && e) {
      row.kind = 'empty';
      explain(row, e);
      row.status = 'Terminating';
    }
  } else if (!p.ready) {
    row.status = p.waitingReason ?? (p.scheduled ? (p.phase === 'Running' ? 'NotReady' : p.phase || 'Unknown') : 'Pending');
    if (p.waitingMessage) row.message = p.waitingMessage;
  }
  return row;
}

/**
 * The node table of one observation: a row per daemon pod, and one per node that should run a pod and
 * has none. Blocked and empty nodes show why (see {@link explanations}).
 */
export function nodeRows(obs: Observation, status: GuardStatus, now: number): NodeRow[] {
  if (obs.kind !== 'Target') return [];
  const revByHash = new Map(obs.revisions.map((r) => [r.hash, r.revision]));
  const why = explanations(obs, status, now);
  const rows: NodeRow[] = [];
  for (const n of obs.nodes) {
    const notTarget = n.eligible ? undefined : (n.ineligibleReason ?? 'not a target');
    for (const p of [...n.pods].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name))) {
      rows.push(podRow(n, p, revByHash.get(p.hash), why, notTarget));
    }
    const e = why.empty.get(n.node);
    if (n.pods.length === 0 && (e || n.eligible)) {
      const row: NodeRow = { node: n.node, ready: false, restarts: 0, status: 'NoPod', kind: 'empty' };
      if (e) explain(row, e);
      if (notTarget !== undefined) row.notTarget = notTarget;
      rows.push(row);
    }
  }
  return rows.sort(byRevisionThenNode);
}

/** The guards among `guards` that target `kind` `target`, by name. */
export function guardsTargeting(guards: ReadonlyArray<Readonly<SlimGuard>>, kind: TargetKind, target: string): GuardRef[] {
  return guards
    .filter((g) => g.spec.targetRef?.name === target && g.spec.targetRef.kind === kind && !g.metadata.deletionTimestamp)
    .map((g) => ({
      name: g.metadata.name,
      ...(g.status?.state ? { state: g.status.state } : {}),
      ...(g.status?.cause ? { cause: g.status.cause } : {}),
      ...(g.status?.owner ? { owner: g.status.owner } : {}),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Builds what one render shows from an observation and decide's status for it. */
export function buildView(args: {
  kind: GetView['kind'];
  /** The kind of the target shown. */
  targetKind: TargetKind;
  namespace: string;
  name: string;
  obs: Observation;
  status: GuardStatus;
  now: number;
  guard?: GuardSummary;
  guardedBy?: GuardRef[];
}): GetView {
  const { obs, status } = args;
  const dsName = obs.kind === 'Target' ? obs.target.name : obs.targetName;
  const daemonSet: DaemonSetSummary = { kind: args.targetKind, namespace: args.namespace, name: dsName, found: obs.kind === 'Target' };
  let state: string = status.state ?? 'Unknown';
  if (obs.kind === 'Target') {
    const ds = obs.target;
    Object.assign(daemonSet, {
      desired: ds.desired,
      current: ds.current,
      updated: ds.updated,
      ready: ds.ready,
      available: ds.available,
      generation: ds.generation,
      observedGeneration: ds.observedGeneration,
    });
    // As check: "Healthy" before the controller has seen the new template describes the old one.
    if (ds.observedGeneration < ds.generation && state === 'Healthy') state = 'Waiting';
  }
  return {
    kind: args.kind,
    at: new Date(args.now).toISOString(),
    ...(args.guard ? { guard: args.guard } : {}),
    ...(args.guardedBy ? { guardedBy: args.guardedBy } : {}),
    daemonSet,
    state,
    ...(status.cause ? { cause: status.cause } : {}),
    ...(status.owner ? { owner: status.owner } : {}),
    ...(status.message ? { message: status.message } : {}),
    ...(status.currentRevision ? { currentRevision: { ...status.currentRevision } } : {}),
    revisions: [...(status.generations ?? [])],
    nodes: nodeRows(obs, status, args.now),
  };
}
