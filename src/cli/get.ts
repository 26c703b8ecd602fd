/**
 * `rollout-guard get ds/NAME | rg/NAME -n NS [--watch] [--output text|json]`: a read-only view of one
 * rollout, node by node, in the spirit of `kubectl argo rollouts get`.
 *
 * For a DaemonSet it observes exactly as `rollout-guard check` does (the same {@link DaemonSetObserver}:
 * informers, gather and the pure decide) and prints a header (the DaemonSet's counters, the state, the
 * cause, whose fault, the revisions with their node counts) and one row per daemon pod, or per node that
 * should run one and has none: which revision it runs, whether it is ready, and for a blocked or empty
 * node why and whose fault (`ImagePullBackOff (Revision)`).
 *
 * For a RolloutGuard the header is the guard's own status, as the operator wrote it (state, cause, owner,
 * message, revisions, the undo), and the rows are computed live from its target DaemonSet.
 *
 * It writes nothing. With --watch it re-renders when the DaemonSet, its pods, its revisions, the nodes or
 * the guard change (the informers' watches, debounced) and when decide's next deadline passes; it stops
 * on SIGINT or SIGTERM.
 *
 * Exit codes: 0 shown, 1 error, 2 usage, 4 the DaemonSet or the guard does not exist.
 */
import { pino, type Logger } from 'pino';
import { attributeBlocked, attributeEmpty } from '../domain/nodeAttribution.js';
import { GUARD_DEFAULTS, withDefaults } from '../api/defaults.js';
import { fmtRev } from '../domain/messages.js';
import { computeSplit } from '../domain/split.js';
import type {
  BlockedNode,
  CauseClass,
  EmptyNode,
  FaultOwner,
  GenerationStatus,
  GuardSpec,
  GuardStatus,
  RevisionRef,
  UndoPlan,
  UndoRecord,
  UndoSkip,
} from '../api/types.js';
import type { Observation } from '../domain/observation.js';
import { ApiClient, ApiError, isNotFound, summarizeError } from '../k8s/apiClient.js';
import { Informer } from '../k8s/informer.js';
import { loadConnection, type Connection } from '../k8s/kubeConfig.js';
import { guardsPath } from '../k8s/apiPaths.js';
import { slimGuard, type SlimGuard } from '../k8s/slim.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { UsageError } from '../runtime/config.js';
import { CONNECTION_FLAGS, CONNECTION_USAGE, connectionOf, outputFormat, parseArgs, text, wantsHelp } from './args.js';
import { DaemonSetObserver, ExitCode, checkSpec, preflight } from './check.js';

export interface GetOptions extends Connection {
  kind: 'DaemonSet' | 'RolloutGuard';
  name: string;
  /** Absent: the kubeconfig context's namespace, else `default` (as kubectl). */
  namespace?: string;
  watch: boolean;
  output: 'text' | 'json';
}

/** Usage of the get subcommand, printed by `get --help`. */
export const GET_USAGE = `usage: rollout-guard get ds/NAME|rg/NAME [-n NAMESPACE] [--watch] [--output text|json] ${CONNECTION_USAGE}
       kubectl rollout-guard get ds/NAME|rg/NAME [-n NAMESPACE] [--watch] [--output text|json] ${CONNECTION_USAGE}

Shows one rollout node by node, read-only: the DaemonSet's counters, the state, the cause and whose
fault it is, the revisions with their node counts, then a row per node: its revision, pod, readiness
and, for a blocked or empty node, the reason and the owner, e.g. ImagePullBackOff (Revision).
  ds/NAME      observe the DaemonSet as \`rollout-guard check\` does (its state is judged from the moment
               get starts: a RolloutGuard keeps the history)
  rg/NAME      the RolloutGuard's own status, plus the rows computed live from its DaemonSet
  -w, --watch  re-render on every change (API watches) until Ctrl-C
  -o, --output text (default) or json (with --watch: one JSON document per line)
  -n           the namespace (default: the kubeconfig context's, else default)
  --kubeconfig, --context, --cluster, --user   as kubectl's (a --kubeconfig list is merged as kubectl merges $KUBECONFIG)
exit codes: 0 shown, 1 error, 2 usage, 4 not found`;

const DS_TARGET = /^(?:ds|daemonsets?|daemonsets?\.apps)\/(.+)$/i;
const RG_TARGET = /^(?:rg|rolloutguards?|rolloutguards?\.rolloutguard\.dev)\/(.+)$/i;
/** A DNS subdomain name, as DaemonSets and RolloutGuards are named. */
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The flags of `get`; see {@link GET_USAGE}. */
const GET_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  watch: { names: ['-w', '--watch'], switch: true },
  output: { names: ['-o', '--output'], value: outputFormat },
  ...CONNECTION_FLAGS,
} as const;

export function parseGetArgs(args: readonly string[]): GetOptions {
  const { target, flags } = parseArgs(args, GET_FLAGS);
  const { namespace } = flags;
  if (!target) throw new UsageError('get needs a target: ds/NAME or rg/NAME');
  const ds = DS_TARGET.exec(target);
  const rg = RG_TARGET.exec(target);
  const name = ds?.[1] ?? rg?.[1];
  if (name === undefined) throw new UsageError(`target must look like ds/NAME or rg/NAME, got ${JSON.stringify(target)}`);
  if (name !== name.toLowerCase()) throw new UsageError(`a name is lowercase, got ${JSON.stringify(name)}`);
  if (!NAME.test(name)) throw new UsageError(`not a valid name: ${JSON.stringify(name)}`);
  const opts: GetOptions = {
    kind: ds ? 'DaemonSet' : 'RolloutGuard',
    name,
    watch: flags.watch ?? false,
    output: flags.output ?? 'text',
    ...connectionOf(flags),
  };
  if (namespace !== undefined) opts.namespace = namespace;
  return opts;
}

// ---------------------------------------------------------------------------------------------------
// The view: plain data, built by pure functions from an observation and decide's status.
// ---------------------------------------------------------------------------------------------------

/** One row of the node table: a daemon pod, or a node that should run one and has none. */
export interface NodeRow {
  node: string;
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
export interface DaemonSetSummary {
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
  kind: 'DaemonSet' | 'RolloutGuard';
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

/**
 * The node table of one observation. Blocked and empty nodes take their reason and owner from decide's
 * status; status lists stop at 20 nodes, so the rest are attributed here, node by node, with the same
 * functions decide uses.
 */
export function nodeRows(obs: Observation, status: GuardStatus, now: number): NodeRow[] {
  if (obs.kind !== 'Target') return [];
  const revByHash = new Map(obs.revisions.map((r) => [r.hash, r.revision]));
  const blocked = new Map<string, BlockedNode>();
  const empty = new Map<string, EmptyNode>();
  const blockedKey = (node: string, pod: string | undefined): string => `${node}\u0000${pod ?? ''}`;
  for (const b of status.blockedNodes ?? []) blocked.set(blockedKey(b.node, b.pod), b);
  for (const e of status.emptyNodes ?? []) empty.set(e.node, e);
  if ((status.blockedNodeCount ?? 0) > blocked.size || (status.emptyNodeCount ?? 0) > empty.size) {
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
          obs.ds.minReadySeconds,
        ),
      );
    }
    for (const e of split.empty) if (!empty.has(e.node)) empty.set(e.node, attributeEmpty(e, byName.get(e.node), now));
  }

  const rows: NodeRow[] = [];
  const explain = (row: NodeRow, why: BlockedNode | EmptyNode): void => {
    row.status = why.reason;
    if (why.owner) row.owner = why.owner;
    if (why.cause) row.cause = why.cause;
    if (why.message) row.message = why.message;
  };
  for (const n of obs.nodes) {
    const notTarget = n.eligible ? undefined : (n.ineligibleReason ?? 'not a target');
    const live = n.pods.filter((p) => !p.deleting);
    const e = empty.get(n.node);
    for (const p of [...n.pods].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name))) {
      const rev = revByHash.get(p.hash);
      const row: NodeRow = {
        node: n.node,
        ...(rev !== undefined ? { revision: rev } : {}),
        hash: p.hash,
        pod: p.name,
        ready: p.ready,
        restarts: p.restartCount,
        status: 'Running',
        kind: 'ok',
      };
      if (notTarget !== undefined) row.notTarget = notTarget;
      const b = blocked.get(blockedKey(n.node, p.name));
      if (b) {
        row.kind = 'blocked';
        explain(row, b);
      } else if (p.deleting) {
        row.status = 'Terminating';
        // The node has no other pod: the rollout waits for this one to go.
        if (live.length === 0 && e) {
          row.kind = 'empty';
          explain(row, e);
          row.status = 'Terminating';
        }
      } else if (!p.ready) {
        row.status = p.waitingReason ?? (p.scheduled ? (p.phase === 'Running' ? 'NotReady' : p.phase || 'Unknown') : 'Pending');
        if (p.waitingMessage) row.message = p.waitingMessage;
      }
      rows.push(row);
    }
    if (n.pods.length === 0 && (e || n.eligible)) {
      const row: NodeRow = { node: n.node, ready: false, restarts: 0, status: 'NoPod', kind: 'empty' };
      if (e) explain(row, e);
      if (notTarget !== undefined) row.notTarget = notTarget;
      rows.push(row);
    }
  }
  return rows.sort(byRevisionThenNode);
}

/** The guards among `guards` that target DaemonSet `target`, by name. */
export function guardsTargeting(guards: ReadonlyArray<Readonly<SlimGuard>>, target: string): GuardRef[] {
  return guards
    .filter((g) => g.spec.targetRef?.name === target && !g.metadata.deletionTimestamp)
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
  namespace: string;
  name: string;
  obs: Observation;
  status: GuardStatus;
  now: number;
  guard?: GuardSummary;
  guardedBy?: GuardRef[];
}): GetView {
  const { obs, status } = args;
  const dsName = obs.kind === 'Target' ? obs.ds.name : obs.targetName;
  const daemonSet: DaemonSetSummary = { namespace: args.namespace, name: dsName, found: obs.kind === 'Target' };
  let state: string = status.state ?? 'Unknown';
  if (obs.kind === 'Target') {
    const { ds } = obs;
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

// ---------------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------------

const ANSI = { red: 31, green: 32, yellow: 33, blue: 34, cyan: 36, bold: 1, dim: 2 } as const;
type Paint = (text: string, ...styles: Array<keyof typeof ANSI>) => string;

const STATE_COLOUR: Record<string, keyof typeof ANSI> = {
  Healthy: 'green',
  RolledBack: 'green',
  Progressing: 'cyan',
  RollingBack: 'cyan',
  Waiting: 'cyan',
  Suspect: 'yellow',
  Suspended: 'yellow',
  Conflict: 'yellow',
  Stalled: 'red',
  Failed: 'red',
};

/** "3 (5d8f9c7b4)", or "? (5d8f9c7b4)" when the revision number is not known. */
function revCell(r: { revision?: number; hash?: string }): string {
  if (r.hash === undefined) return '-';
  return `${r.revision ?? '?'} (${r.hash})`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function revisionLines(gens: readonly GenerationStatus[], current: RevisionRef | undefined, paint: Paint): string[] {
  if (gens.length === 0) return ['Revisions:    none on any node'];
  const cells = gens.map(
    (g) =>
      [fmtRev(g), `${plural(g.nodes, 'node')}, ${g.ready} ready`, g.images.join(','), g.hash === current?.hash ? 'current' : ''] as const,
  );
  const w0 = Math.max(...cells.map((c) => c[0].length));
  const w1 = Math.max(...cells.map((c) => c[1].length));
  return cells.map(
    ([rev, count, images, cur], i) =>
      `${i === 0 ? 'Revisions:' : ''}`.padEnd(14) +
      `${rev.padEnd(w0)}  ${count.padEnd(w1)}  ${images}${cur ? `  ${paint(`(${cur})`, 'dim')}` : ''}`.trimEnd(),
  );
}

function undoLine(g: GuardSummary): string | undefined {
  const u = g.lastUndo;
  if (u)
    return `${u.result}: ${fmtRev({ revision: u.fromRevision, hash: u.fromHash })} → ${fmtRev({ revision: u.toRevision, hash: u.toHash })} at ${u.at}${u.message ? ` (${u.message})` : ''}`;
  const p = g.undoPlan;
  // The operator keeps a plan after the template moved on (baking a fix, say): it is stale once the
  // broken revision it was made for is no longer the current one.
  if (p && p.forHash === g.currentRevision?.hash)
    return `would restore ${fmtRev({ revision: p.toRevision, hash: p.toHash })} on ${plural(p.nodes, 'node')}${p.dryRun ? ` (dry run ${p.dryRun})` : ''}`;
  if (g.undoSkipped) return `not undone: ${g.undoSkipped.reason} (${g.undoSkipped.message})`;
  return undefined;
}

/** The table, with columns padded on the plain text before colour is added. */
function table(rows: readonly NodeRow[], paint: Paint): string[] {
  const head = ['NODE', 'REVISION', 'POD', 'READY', 'RESTARTS', 'STATUS'];
  const cells = rows.map((r) => [
    r.node,
    revCell(r),
    r.pod ?? '-',
    r.pod === undefined ? '-' : r.ready ? 'yes' : 'no',
    r.pod === undefined ? '-' : String(r.restarts),
    `${r.status}${r.owner ? ` (${r.owner})` : ''}${r.notTarget ? ' [not a target]' : ''}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('   ');
  const colour = (r: NodeRow): keyof typeof ANSI | undefined => {
    if (r.kind === 'blocked') return r.owner === 'ConfiguredWait' ? 'yellow' : 'red';
    if (r.kind === 'empty') return 'yellow';
    if (r.status === 'Terminating') return 'dim';
    return r.ready ? 'green' : 'yellow';
  };
  return [
    paint(line(head), 'bold'),
    ...rows.map((r, i) => {
      const c = cells[i]!;
      const style = colour(r);
      const last = c.length - 1;
      const plain = line(c);
      if (!style) return plain;
      // Colour only the STATUS cell: the rest stays readable whatever the terminal's palette.
      const cut = plain.length - (c[last] ?? '').length;
      return plain.slice(0, cut) + paint(c[last] ?? '', style);
    }),
  ];
}

/**
 * The text form: a header, then the node table, then the reason of each blocked or empty node in full.
 * `color` adds ANSI colours (only for a terminal).
 */
export function renderText(v: GetView, opts: { color: boolean }): string {
  const paint: Paint = (text, ...styles) =>
    opts.color && styles.length > 0 ? `\u001b[${styles.map((s) => ANSI[s]).join(';')}m${text}\u001b[0m` : text;
  const label = (l: string): string => `${l}:`.padEnd(14);
  const stateText = (s: string | undefined): string => (s ? paint(s, STATE_COLOUR[s] ?? 'bold') : 'Unknown');
  const out: string[] = [];
  const ds = v.daemonSet;
  const counters = ds.found
    ? `desired ${ds.desired ?? 0}  current ${ds.current ?? 0}  updated ${ds.updated ?? 0}  ready ${ds.ready ?? 0}  available ${ds.available ?? 0}`
    : paint('not found', 'red');
  if (v.guard) {
    const g = v.guard;
    out.push(`${label('RolloutGuard')}${g.namespace}/${g.name}${g.found ? '' : `  ${paint('not found', 'red')}`}`);
    out.push(`${label('DaemonSet')}${ds.namespace}/${ds.name}  ${counters}`);
    out.push(`${label('State')}${stateText(g.state)}`);
    if (g.cause) out.push(`${label('Cause')}${g.cause}`);
    if (g.owner) out.push(`${label('Whose fault')}${g.owner}`);
    out.push(...revisionLines(g.revisions, g.currentRevision, paint));
    const undo = undoLine(g);
    if (undo) out.push(`${label('Undo')}${undo}`);
    if (g.message) out.push(`${label('Message')}${g.message}`);
  } else {
    out.push(`${label('DaemonSet')}${ds.namespace}/${ds.name}  ${counters}`);
    out.push(
      `${label('State')}${stateText(v.state)}  ${paint('(judged by this command from its start; a RolloutGuard keeps the history)', 'dim')}`,
    );
    for (const [i, g] of (v.guardedBy ?? []).entries()) {
      const what = [g.state ? stateText(g.state) : 'no status yet', g.cause ? `${g.cause}${g.owner ? ` (${g.owner})` : ''}` : '']
        .filter(Boolean)
        .join('  ');
      out.push(`${i === 0 ? label('Guarded by') : ''.padEnd(14)}rg/${g.name}  ${what}`);
    }
    if (v.cause) out.push(`${label('Cause')}${v.cause}`);
    if (v.owner) out.push(`${label('Whose fault')}${v.owner}`);
    out.push(...revisionLines(v.revisions, v.currentRevision, paint));
    if (v.message) out.push(`${label('Message')}${v.message.replace(' (onStall.action is Report).', '.')}`);
  }
  out.push('');
  if (v.nodes.length === 0)
    out.push(ds.found ? 'No node runs or should run this DaemonSet.' : 'No nodes to show: the DaemonSet does not exist.');
  else out.push(...table(v.nodes, paint));
  const why = v.nodes.filter((r) => r.kind !== 'ok' && r.message);
  if (why.length > 0) {
    out.push('');
    for (const r of why) out.push(`${r.node}: ${r.message}`);
  }
  return out.join('\n');
}

/** The JSON form: the view itself, pretty for one render, one line per render with --watch. */
export function renderJson(v: GetView, opts: { compact: boolean }): string {
  return opts.compact ? JSON.stringify(v) : JSON.stringify(v, null, 2);
}

// ---------------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------------

/** Changes closer together than this make one render. */
export const WATCH_DEBOUNCE_MS = 250;

/** Where get writes; injectable for tests. */
export interface GetIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stdout is a terminal: --watch redraws in place. */
  tty: boolean;
  /** ANSI colours (a terminal, and NO_COLOR not set). */
  color: boolean;
  /** Resolves when the user asks to stop (SIGINT, SIGTERM); only --watch waits for it. */
  stopped: Promise<void>;
}

/** Reads a guard; undefined when it does not exist. */
async function readGuard(client: ApiClient, namespace: string, name: string): Promise<SlimGuard | undefined> {
  try {
    return slimGuard(await client.request('GET', guardsPath(namespace, name)));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Whether the collection can be listed: false when the API does not serve it (404) or RBAC forbids it (403). */
async function canList(client: ApiClient, path: string): Promise<boolean> {
  try {
    await client.request('GET', path, { query: { limit: 1 } });
    return true;
  } catch (e) {
    if (e instanceof ApiError && (e.statusCode === 404 || e.statusCode === 403)) return false;
    throw e;
  }
}

/** Runs get: one render, or renders until `io.stopped` with --watch. Exposed with injectable parts for tests. */
export async function get(
  opts: GetOptions & { namespace: string },
  client: ApiClient,
  clock: Clock,
  log: Logger,
  io: GetIo,
): Promise<number> {
  const { namespace } = opts;
  let target = opts.name;
  let spec: GuardSpec = checkSpec(target, GUARD_DEFAULTS.progressDeadlineSeconds, GUARD_DEFAULTS.suspectAfterSeconds);
  if (opts.kind === 'RolloutGuard') {
    const guard = await readGuard(client, namespace, opts.name);
    if (!guard) {
      io.err(`rollout-guard get: RolloutGuard ${opts.name} not found in namespace ${namespace}`);
      return ExitCode.NotFound;
    }
    target = guard.spec.targetRef.name;
    // The rows are judged with the guard's own deadlines; what the guard does about a stall is its business.
    const gs = withDefaults(guard.spec);
    spec = checkSpec(target, gs.progressDeadlineSeconds, gs.suspectAfterSeconds);
  }

  const observer = new DaemonSetObserver(client, namespace, target, log);
  const early = await preflight(client, { namespace, name: target }, Object.values(observer.paths));
  // A guard whose DaemonSet is missing is still worth showing: the guard says so itself.
  if (early && opts.kind === 'DaemonSet') {
    io.err(`rollout-guard get: ${early.message}`);
    return early.code;
  }

  // Guards change too (the operator writes their status). rg/NAME watches its guard; ds/NAME the guards
  // of the namespace, to name those that target it, if the API has RolloutGuards and we may list them.
  const guardList = guardsPath(namespace);
  const guardInf =
    opts.kind === 'RolloutGuard' || (await canList(client, guardList))
      ? new Informer<SlimGuard>(
          client,
          {
            name: 'rolloutguards',
            listPath: guardList,
            ...(opts.kind === 'RolloutGuard' ? { fieldSelector: `metadata.name=${opts.name}` } : {}),
            slim: slimGuard,
            watchTimeoutSeconds: 300,
            backoff: { initialMs: 500, maxMs: 10_000 },
          },
          log,
        )
      : undefined;

  let status: GuardStatus = {};
  let last = '';
  let renders = 0;
  const render = (): number | undefined => {
    const now = clock.now();
    const { obs, decision } = observer.pass(status, { spec, generation: 1 }, now);
    // A pass set aside until the caches agree shows nothing new; the next change renders again.
    if (decision.deferred && renders > 0) return decision.requeueAfterMs;
    status = decision.status;
    const view = buildView({
      kind: opts.kind,
      namespace,
      name: opts.name,
      obs,
      status,
      now,
      ...(opts.kind === 'RolloutGuard' ? { guard: guardSummary(namespace, opts.name, guardInf?.get(namespace, opts.name), target) } : {}),
      ...(opts.kind === 'DaemonSet' && guardInf ? { guardedBy: guardsTargeting(guardInf.list(namespace), target) } : {}),
    });
    const text = opts.output === 'json' ? renderJson(view, { compact: opts.watch }) : renderText(view, { color: io.color });
    // The time alone changing is no change.
    const same = opts.output === 'json' ? renderJson({ ...view, at: '' }, { compact: true }) : text;
    if (same !== last) {
      last = same;
      if (opts.watch && opts.output === 'text') {
        // A terminal is redrawn in place; a pipe gets each render in turn, stamped with its time.
        if (io.tty) io.out(`\u001b[H\u001b[2J${text}\n\nwatching (Ctrl-C to stop), last change ${view.at}`);
        else io.out(`${renders > 0 ? '\n' : ''}--- ${view.at}\n${text}`);
      } else {
        io.out(text);
      }
      renders++;
    }
    return decision.requeueAfterMs;
  };

  let debounce: NodeJS.Timeout | undefined;
  let requeue: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    if (debounce) return;
    debounce = setTimeout(() => {
      debounce = undefined;
      renderAndRequeue();
    }, WATCH_DEBOUNCE_MS);
  };
  const renderAndRequeue = (): void => {
    clearTimeout(requeue);
    const next = render();
    // decide's next deadline (Suspect, Stalled) passes without any watch event.
    if (next !== undefined) requeue = setTimeout(schedule, next);
  };
  if (opts.watch) {
    observer.onChange(schedule);
    guardInf?.onEvent(schedule);
  }

  observer.start();
  guardInf?.start();
  try {
    await observer.synced();
    if (guardInf) await guardInf.waitForSync();
    if (!opts.watch) {
      render();
      return ExitCode.Ok;
    }
    renderAndRequeue();
    await io.stopped;
    return ExitCode.Ok;
  } finally {
    clearTimeout(debounce);
    clearTimeout(requeue);
    await Promise.allSettled([observer.stop(), guardInf?.stop()]);
  }
}

/** Entry point of `rollout-guard get` (and `kubectl rollout-guard get`). */
export async function runGet(args: readonly string[]): Promise<number> {
  if (wantsHelp(args)) {
    console.log(GET_USAGE);
    return ExitCode.Ok;
  }
  const opts = parseGetArgs(args);
  // Logs go to stderr: stdout carries the view, which must stay parseable with --output json.
  const log = pino(
    { level: process.env.LOG_LEVEL ?? 'warn', base: { component: 'rollout-guard-get' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
  let client: ApiClient;
  let namespace = opts.namespace;
  try {
    // As kubectl: without -n, the namespace of the current context.
    const c = loadConnection(opts);
    namespace ??= c.namespace;
    client = ApiClient.fromKubeConfig(c.kc);
  } catch (e) {
    console.error(`rollout-guard get: cannot load kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ''}: ${summarizeError(e)}`);
    return ExitCode.Failure;
  }
  let onSignal: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => {
    onSignal = resolve;
  });
  // Only --watch runs until stopped; a single render keeps the default signal actions.
  const signals = opts.watch ? (['SIGINT', 'SIGTERM'] as const) : [];
  for (const s of signals) process.on(s, onSignal!);
  try {
    return await get({ ...opts, namespace }, client, systemClock, log, {
      out: (t) => console.log(t),
      err: (t) => console.error(t),
      tty: process.stdout.isTTY === true,
      color: process.stdout.isTTY === true && !process.env.NO_COLOR,
      stopped,
    });
  } catch (e) {
    console.error(`rollout-guard get: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    for (const s of signals) process.off(s, onSignal!);
    client.close();
  }
}
