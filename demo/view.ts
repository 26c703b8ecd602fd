/**
 * What the demo shows while the story runs: one snapshot of the workload (a DaemonSet, a StatefulSet or a
 * Deployment), its pods and revisions and the guard, read straight from the API server, rendered either as a frame redrawn in place (a terminal) or as one
 * timestamped line per change (CI logs). Also the closing summary, computed from what was observed.
 *
 * Everything but {@link readSnapshot} is pure, so the rendering can be reasoned about from its input.
 */
import type { ApiClient } from '../src/k8s/apiClient.js';
import { isNotFound } from '../src/k8s/apiErrors.js';
import { KINDS, type KindDescriptor, type TargetKind } from '../src/api/kinds.js';
import { DEPLOYMENT_REVISION_ANNOTATION } from '../src/api/names.js';
import type { BlockedNode, EmptyNode, GuardStatus, UndoPlan, UndoRecord } from '../src/api/types.js';

/** The kubectl get ds columns. */
export interface DsColumns {
  desired: number;
  current: number;
  ready: number;
  upToDate: number;
  available: number;
  /** The controller has observed the current generation: the counters describe the live template. */
  observed: boolean;
  image: string;
}

/** One daemon pod as the node row shows it. */
export interface PodCell {
  hash: string;
  revision?: number;
  /** Ready, ImagePullBackOff, ErrImagePull, CrashLoopBackOff, ContainerCreating, Terminating, Pending, … */
  state: string;
  ready: boolean;
  deleting: boolean;
}

/** One ReplicaSet of a Deployment: one revision of its pod template, and how many pods it has. */
export interface ReplicaSetRow {
  name: string;
  /** Its `deployment.kubernetes.io/revision`. */
  revision?: number;
  /** Its `pod-template-hash`, the label its pods carry. */
  hash: string;
  /** spec.replicas: what the Deployment controller scaled it to. */
  desired: number;
  ready: number;
  available: number;
}

/** One node that runs, or should run, the daemon pod (a StatefulSet's ordinal, a Deployment's pod). */
export interface NodeRow {
  node: string;
  pods: PodCell[];
  /**
   * What is wrong with the node itself (e.g. "Ready=Unknown, tainted unreachable"), when a story reads the nodes;
   * absent while it is healthy or not read.
   */
  health?: string;
}

/** Everything the view and the story checks need at one instant. */
export interface Snapshot {
  at: number;
  /** The workload's kind: a StatefulSet's rows are its ordinals' pods and a Deployment's its pods, not nodes. */
  kind: WorkloadKind;
  /** The workload's counters, in `kubectl get ds` terms (a StatefulSet's or Deployment's read as desired = replicas). */
  ds?: DsColumns;
  guard?: GuardStatus;
  nodes: NodeRow[];
  /** A Deployment's ReplicaSets, oldest revision first (absent for the kinds whose history is ControllerRevisions). */
  replicaSets?: ReplicaSetRow[];
  /** The guard's Events (not their DaemonSet mirrors), oldest first. */
  events: GuardEvent[];
}

/** An Event the operator recorded on the RolloutGuard, with its time in ms since the epoch. */
export interface GuardEvent {
  uid: string;
  at: number;
  type: string;
  reason: string;
  note: string;
}

interface Meta {
  name: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}
/** The kinds a story can tell of: those a guard can target, each described in src/api/kinds.ts. */
export type WorkloadKind = TargetKind;

/** A StatefulSet or a Deployment: its counters are its replicas'. */
interface StsJson {
  metadata: Meta;
  spec: { replicas?: number; template: { spec: { containers: Array<{ image: string }> } } };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}
interface DsJson {
  metadata: Meta;
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
  status?: {
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    numberReady?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    observedGeneration?: number;
  };
}
interface PodJson {
  metadata: Meta;
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: Array<{ type: string; status: string; reason?: string }>;
    containerStatuses?: Array<{ state?: { waiting?: { reason?: string }; terminated?: { reason?: string } } }>;
  };
}
interface RevisionJson {
  metadata: Meta;
  revision: number;
}
interface ReplicaSetJson {
  metadata: Meta;
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; availableReplicas?: number };
}
interface GuardJson {
  status?: GuardStatus;
}
interface EventJson {
  metadata: Meta & { uid?: string; creationTimestamp?: string };
  eventTime?: string;
  type?: string;
  reason?: string;
  note?: string;
  regarding?: { kind?: string; name?: string };
}

async function getOrUndefined<T>(client: ApiClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>('GET', path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** What a pod shows in the STATUS column of `kubectl get pods`, reduced to the cases the demo meets. */
export function podState(p: PodJson): { state: string; ready: boolean } {
  if (p.metadata.deletionTimestamp) return { state: 'Terminating', ready: false };
  const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  if (ready) return { state: 'Ready', ready };
  const cs = p.status?.containerStatuses?.[0]?.state;
  const reason = cs?.waiting?.reason ?? cs?.terminated?.reason;
  if (reason) return { state: reason, ready };
  const unschedulable = p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unschedulable) return { state: unschedulable.reason ?? 'Unschedulable', ready };
  return { state: p.status?.phase === 'Running' ? 'NotReady' : (p.status?.phase ?? 'Pending'), ready };
}

/**
 * Reads the workload, its pods and revisions, and the guard (all of them named `name`) in one go.
 * `pinned` rows are shown even while they have no pod (then as "empty"): a DaemonSet's nodes, or a
 * StatefulSet's ordinals (its pods' names), whose rows are keyed by pod name instead of node. A
 * Deployment's rows are its pods (nothing pinned: their names are not known in advance), and its
 * revisions are its ReplicaSets, numbered by their `deployment.kubernetes.io/revision`.
 * What differs by kind is read from the kind's descriptor (src/api/kinds.ts).
 */
export async function readSnapshot(
  client: ApiClient,
  ns: string,
  name: string,
  pinned: readonly string[],
  now: () => number,
  kind: WorkloadKind = 'DaemonSet',
): Promise<Snapshot> {
  const n = encodeURIComponent(ns);
  const d = KINDS[kind];
  const byApp = { query: { labelSelector: `app=${name}` } };
  const [workload, pods, revisions, guard, events] = await Promise.all([
    getOrUndefined<DsJson | StsJson>(client, `/apis/apps/v1/namespaces/${n}/${d.resource}/${name}`),
    client.request<{ items: PodJson[] }>('GET', `/api/v1/namespaces/${n}/pods`, byApp),
    readRevisions(client, n, d.history, byApp),
    getOrUndefined<GuardJson>(client, `/apis/rolloutguard.dev/v1alpha1/namespaces/${n}/rolloutguards/${name}`),
    // events.k8s.io/v1 carries eventTime in microseconds: precise enough to time a transition the 500 ms
    // polling may miss entirely (Stalled lasts milliseconds when the undo follows at once).
    client.request<{ items: EventJson[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${n}/events`, {
      query: { fieldSelector: `regarding.kind=RolloutGuard,regarding.name=${name}` },
    }),
  ]);
  // A pod's revision label holds its revision's hash (a daemon pod's controller-revision-hash, a
  // Deployment pod's pod-template-hash), or a StatefulSet's revision's name.
  const keyOf = (m: Meta): string => (d.revisionLabelHolds === 'revisionName' ? m.name : (m.labels?.[d.revisionLabel] ?? ''));
  const revByHash = new Map(revisions.map((r) => [keyOf(r.metadata), r.revision]));
  const rows = new Map<string, NodeRow>(pinned.map((node) => [node, { node, pods: [] }]));
  for (const e of guard?.status?.emptyNodes ?? []) if (!rows.has(e.node)) rows.set(e.node, { node: e.node, pods: [] });
  for (const p of pods.items) {
    const node = d.units === 'nodes' ? (p.spec.nodeName ?? '(unscheduled)') : p.metadata.name;
    const row = rows.get(node) ?? { node, pods: [] };
    rows.set(node, row);
    const hash = p.metadata.labels?.[d.revisionLabel] ?? '?';
    const cell: PodCell = { hash, ...podState(p), deleting: Boolean(p.metadata.deletionTimestamp) };
    const revision = revByHash.get(hash);
    if (revision !== undefined) cell.revision = revision;
    row.pods.push(cell);
  }
  const guardEvents = events.items
    .map((e): GuardEvent => ({
      uid: e.metadata.uid ?? e.metadata.name,
      at: Date.parse(e.eventTime ?? e.metadata.creationTimestamp ?? ''),
      type: e.type ?? '',
      reason: e.reason ?? '',
      note: e.note ?? '',
    }))
    .sort((a, b) => a.at - b.at);
  const snap: Snapshot = {
    at: now(),
    kind,
    events: guardEvents,
    nodes: [...rows.values()].sort((a, b) => a.node.localeCompare(b.node, 'en', { numeric: true })),
  };
  if (d.history === 'ReplicaSets') snap.replicaSets = revisions.map((r) => replicaSetRow(r, keyOf(r.metadata)));
  if (workload) snap.ds = d.desiredFromPlacement ? dsColumns(workload) : replicaColumns(workload);
  if (guard?.status) snap.guard = guard.status;
  return snap;
}

/** A revision as the snapshot reads it: its number, and the ReplicaSet itself when the history is ReplicaSets. */
type Revision = RevisionJson & Partial<ReplicaSetJson>;

/** The workload's revisions: its ControllerRevisions, or its ReplicaSets numbered by their revision annotation. */
async function readRevisions(
  client: ApiClient,
  n: string,
  history: KindDescriptor['history'],
  byApp: { query: { labelSelector: string } },
): Promise<Revision[]> {
  if (history === 'ControllerRevisions')
    return (await client.request<{ items: RevisionJson[] }>('GET', `/apis/apps/v1/namespaces/${n}/controllerrevisions`, byApp)).items;
  const sets = await client.request<{ items: ReplicaSetJson[] }>('GET', `/apis/apps/v1/namespaces/${n}/replicasets`, byApp);
  return sets.items
    .map((rs) => ({ ...rs, revision: Number(rs.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? NaN) }))
    .sort((a, b) => (a.revision || 0) - (b.revision || 0));
}

function replicaSetRow(rs: Revision, hash: string): ReplicaSetRow {
  const row: ReplicaSetRow = {
    name: rs.metadata.name,
    hash,
    desired: rs.spec?.replicas ?? 0,
    ready: rs.status?.readyReplicas ?? 0,
    available: rs.status?.availableReplicas ?? 0,
  };
  if (Number.isInteger(rs.revision)) row.revision = rs.revision;
  return row;
}

function dsColumns(ds: DsJson): DsColumns {
  const s = ds.status ?? {};
  return {
    desired: s.desiredNumberScheduled ?? 0,
    current: s.currentNumberScheduled ?? 0,
    ready: s.numberReady ?? 0,
    upToDate: s.updatedNumberScheduled ?? 0,
    available: s.numberAvailable ?? 0,
    observed: (s.observedGeneration ?? 0) >= (ds.metadata.generation ?? 0),
    image: ds.spec.template.spec.containers[0]?.image ?? '',
  };
}

/**
 * A StatefulSet's or a Deployment's counters in the same columns, from its status: replicas,
 * updatedReplicas, readyReplicas, availableReplicas. UP-TO-DATE counts pods on the update revision only
 * while a rollout is in flight: once the controller reports one revision again, every pod is on it.
 */
function replicaColumns(sts: StsJson): DsColumns {
  const s = sts.status ?? {};
  return {
    desired: sts.spec.replicas ?? 1,
    current: s.replicas ?? 0,
    ready: s.readyReplicas ?? 0,
    upToDate: s.updatedReplicas ?? 0,
    available: s.availableReplicas ?? 0,
    observed: (s.observedGeneration ?? 0) >= (sts.metadata.generation ?? 0),
    image: sts.spec.template.spec.containers[0]?.image ?? '',
  };
}

/** The one pod-template hash every node runs, when the DaemonSet is complete on a single generation. */
export function oneGeneration(s: Snapshot): string | undefined {
  const ds = s.ds;
  if (!ds?.observed || ds.desired === 0 || ds.upToDate !== ds.desired || ds.available !== ds.desired || ds.ready !== ds.desired)
    return undefined;
  const pods = s.nodes.flatMap((r) => r.pods);
  if (pods.length !== ds.desired || pods.some((p) => !p.ready || p.deleting)) return undefined;
  const hashes = new Set(pods.map((p) => p.hash));
  return hashes.size === 1 ? [...hashes][0] : undefined;
}

/** "+12.3s" since the image change (negative before it). */
export function fmtElapsed(ms: number): string {
  return `${ms < 0 ? '-' : '+'}${(Math.abs(ms) / 1000).toFixed(1)}s`;
}

const rev = (c: PodCell): string => (c.revision !== undefined ? `${c.revision} (${c.hash})` : c.hash);
const cellText = (c: PodCell): string => `rev ${c.revision ?? '?'} ${c.state}`;
const rsText = (r: ReplicaSetRow): string => `rev ${r.revision ?? '?'} ${r.desired} desired ${r.ready} ready`;

/** A compact, time-free description of a snapshot: one CI log line is printed whenever it changes. */
export function ciLine(s: Snapshot, maxNodes = 12): string {
  const g = s.guard;
  const state = `${g?.state ?? '-'}${g?.cause ? ` (${g.cause})` : ''}`;
  const d = s.ds;
  const cols = d
    ? `DESIRED ${d.desired} CURRENT ${d.current} READY ${d.ready} UP-TO-DATE ${d.upToDate} AVAILABLE ${d.available}`
    : `${s.kind} missing`;
  const shown = s.nodes
    .slice(0, maxNodes)
    .map((r) => `${r.node}${r.health ? ` [${r.health}]` : ''} ${r.pods.length ? r.pods.map(cellText).join(' + ') : 'empty'}`);
  if (s.nodes.length > maxNodes) shown.push(`… ${s.nodes.length - maxNodes} more`);
  const sets = s.replicaSets?.length ? ` | ReplicaSets ${s.replicaSets.map(rsText).join(', ')}` : '';
  return `guard ${state.padEnd(28)} ${cols} | ${shown.join(', ')}${sets}`;
}

/** ANSI styling for the terminal frame; identity functions when colour is off. */
export interface Style {
  bold: (s: string) => string;
  dim: (s: string) => string;
  good: (s: string) => string;
  warn: (s: string) => string;
  bad: (s: string) => string;
}

export function style(color: boolean): Style {
  const wrap =
    (code: string) =>
    (s: string): string =>
      color ? `\x1b[${code}m${s}\x1b[0m` : s;
  return { bold: wrap('1'), dim: wrap('2'), good: wrap('32'), warn: wrap('33'), bad: wrap('31') };
}

function stateStyle(st: Style, state: string): string {
  if (state === 'Healthy' || state === 'RolledBack' || state === 'Ready') return st.good(state);
  if (state === 'Suspect' || state === 'Progressing' || state === 'RollingBack' || state === 'ContainerCreating' || state === 'Terminating')
    return st.warn(state);
  return st.bad(state);
}

/** Cuts a line to the terminal width, ignoring ANSI sequences when counting, so no line wraps. */
export function fit(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      if (end > i) {
        out += line.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (visible >= width) {
      // Keep closing sequences so a cut coloured word does not leak its colour.
      return `${out}\x1b[0m`;
    }
    out += line[i];
    visible++;
  }
  return out;
}

/**
 * The terminal frame: elapsed time, guard state and message, the workload's columns, one row per node
 * (per pod for the kinds whose unit is not a node), and a Deployment's ReplicaSets.
 */
export function frame(s: Snapshot, t0: number, header: string, st: Style, maxNodes = 12): string[] {
  const elapsedMs = s.at - t0;
  const g = s.guard;
  const d = s.ds;
  const k = KINDS[s.kind];
  // Pod names (web-6f7d9c8b5-x2x7q) are longer than node names: the first column fits the longest.
  const w = Math.max(9, ...s.nodes.slice(0, maxNodes).map((r) => r.node.length + 2));
  const lines = [
    `${st.bold('rollout-guard demo')}  ${header}`,
    `elapsed  ${fmtElapsed(elapsedMs)} since the image change`,
    `guard    ${stateStyle(st, g?.state ?? 'Unknown')}${g?.cause ? `  cause ${st.bold(g.cause)}` : ''}`,
    `         ${st.dim(g?.message ?? '')}`,
    '',
    `         DESIRED  CURRENT  READY  UP-TO-DATE  AVAILABLE   IMAGE`,
    d
      ? `${k.short.padEnd(9)}${String(d.desired).padEnd(9)}${String(d.current).padEnd(9)}${String(d.ready).padEnd(7)}${String(d.upToDate).padEnd(12)}${String(d.available).padEnd(12)}${d.image}`
      : `${k.short.padEnd(9)}(missing)`,
  ];
  if (s.replicaSets) {
    const rw = Math.max(12, ...s.replicaSets.map((r) => r.name.length + 2));
    lines.push('', `${'REPLICASET'.padEnd(rw)}${'REVISION'.padEnd(18)}DESIRED  READY  AVAILABLE`);
    for (const r of s.replicaSets)
      lines.push(
        `${r.name.padEnd(rw)}${`${r.revision ?? '?'} (${r.hash})`.padEnd(18)}${String(r.desired).padEnd(9)}${String(r.ready).padEnd(7)}${r.available}`,
      );
  }
  lines.push(
    '',
    k.units === 'nodes' ? `${'NODE'.padEnd(w)}${'REVISION'.padEnd(18)}POD` : `${'POD'.padEnd(w)}${'REVISION'.padEnd(18)}STATE`,
  );
  for (const r of s.nodes.slice(0, maxNodes)) {
    const health = r.health ? `   ${st.bad(`node ${r.health}`)}` : '';
    if (r.pods.length === 0) {
      lines.push(`${r.node.padEnd(w)}${'-'.padEnd(18)}${st.bad('empty')}${health}`);
      continue;
    }
    r.pods.forEach((p, i) =>
      lines.push(`${(i === 0 ? r.node : '').padEnd(w)}${rev(p).padEnd(18)}${stateStyle(st, p.state)}${i === 0 ? health : ''}`),
    );
  }
  if (s.nodes.length > maxNodes) lines.push(st.dim(`… ${s.nodes.length - maxNodes} more ${k.units === 'nodes' ? 'nodes' : 'pods'}`));
  lines.push('', 'EVENTS (on the RolloutGuard)');
  const recent = s.events.slice(-6);
  if (recent.length === 0) lines.push(st.dim('(none yet)'));
  for (const e of recent) lines.push(`${fmtElapsed(e.at - t0).padStart(8)}  ${e.type === 'Warning' ? st.warn(e.reason) : e.reason}`);
  return lines;
}

/** What the story recorded, for the summary. Times are ms since the image change. */
export interface StoryRecord {
  action: 'Undo' | 'Report';
  ns: string;
  name: string;
  brokenImage: string;
  suspectAfterSeconds: number;
  progressDeadlineSeconds: number;
  original: { revision?: number; hash: string };
  broken?: { revision?: number; hash: string };
  suspectAt?: number;
  stalledAt?: number;
  /** The rollout's last progress as the guard recorded it while in flight (status.rollout.lastProgressAt). */
  lastProgressAt?: number;
  oneGenerationAt?: number;
  cause?: string;
  blocked: BlockedNode[];
  empty: EmptyNode[];
  /** kubectl get ds columns while stalled. */
  stalledColumns?: DsColumns;
  /** Generations while stalled: how many nodes each revision had. */
  stalledSplit?: Array<{ revision?: number; hash: string; nodes: number }>;
  undo?: UndoRecord;
  plan?: UndoPlan;
  /** The number the restored revision carries after the undo (kubectl renumbers it to max+1). */
  restoredAs?: number;
  desired: number;
}

const s1 = (ms: number | undefined): string => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);
const revText = (r: { revision?: number; hash: string } | undefined): string =>
  !r ? 'an unknown revision' : r.revision !== undefined ? `revision ${r.revision} (${r.hash})` : `hash ${r.hash}`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The one-paragraph account of what happened, from recorded facts only. */
export function summary(r: StoryRecord): string {
  const parts: string[] = [];
  parts.push(`At +0.0 s the image of ds/${r.name} was changed to ${r.brokenImage}, creating ${revText(r.broken)}.`);
  const where = [
    ...r.blocked.map((b) => `${b.node}, where the new pod never became ready: ${b.reason}${b.message ? ` (${b.message})` : ''}`),
    ...r.empty.map((e) => `${e.node}, which was left without a pod (${e.message})`),
  ];
  const others = r.desired - r.blocked.length - r.empty.length;
  if (where.length > 0) {
    parts.push(
      `With maxUnavailable 1 the DaemonSet controller replaces one node's pod at a time; it started on ${where.join('; and on ')}, and stopped there.`,
    );
  }
  const c = r.stalledColumns;
  const split =
    r.stalledSplit && r.stalledSplit.length > 1
      ? `; the nodes were split between ${r.stalledSplit.map((g) => `${g.revision !== undefined ? `revision ${g.revision}` : g.hash} (${plural(g.nodes, 'node')})`).join(' and ')}`
      : '';
  if (c) {
    parts.push(
      `Nothing failed loudly: the other ${plural(Math.max(others, 0), 'node')} kept the old pod, kubectl get ds showed DESIRED ${c.desired}, READY ${c.ready}, UP-TO-DATE ${c.upToDate}, AVAILABLE ${c.available}${split}, and \`kubectl rollout status\` would simply have kept waiting.`,
    );
  }
  if (r.stalledAt !== undefined) {
    parts.push(
      `The guard called the rollout Suspect at +${s1(r.suspectAt)} and Stalled at +${s1(r.stalledAt)} with cause ${r.cause ?? '?'}: detection took ${s1(r.stalledAt)} (suspectAfterSeconds ${r.suspectAfterSeconds}, progressDeadlineSeconds ${r.progressDeadlineSeconds}, both counted from the rollout's last progress).`,
    );
  } else {
    parts.push('The guard never reported the rollout as Stalled.');
  }
  if (r.action === 'Undo') {
    if (r.oneGenerationAt !== undefined && r.undo) {
      const renumbered =
        r.restoredAs !== undefined && r.restoredAs !== r.original.revision
          ? `, which the undo renumbers to revision ${r.restoredAs} as \`kubectl rollout undo\` does`
          : '';
      parts.push(
        `With onStall.action Undo it restored ${revText(r.original)}${renumbered}; all ${plural(r.desired, 'node')} were on one generation again, ${r.desired}/${r.desired} ready, at +${s1(r.oneGenerationAt)}: ${s1(r.oneGenerationAt - (r.stalledAt ?? 0))} after detection, ${s1(r.oneGenerationAt)} after the image change.`,
      );
    } else {
      parts.push(
        `The undo did not bring the DaemonSet back to one generation${r.undo ? ` (last undo: ${r.undo.result}, ${r.undo.message})` : ''}.`,
      );
    }
  } else if (r.plan) {
    const dry = r.plan.dryRun ? `, checked by a server-side dry run (${r.plan.dryRun})` : '';
    parts.push(
      `With onStall.action Report the guard changed nothing: the DaemonSet stays split and the guard's status names the way out, restoring ${revText({ revision: r.plan.toRevision, hash: r.plan.toHash })} on ${plural(r.plan.nodes, 'node')}${dry}; \`kubectl rollout undo ds/${r.name} -n ${r.ns}${r.plan.toRevision !== undefined ? ` --to-revision=${r.plan.toRevision}` : ''}\` would do it.`,
    );
  }
  return parts.join(' ');
}
