/**
 * What the dashboard's page shows of one guard, as plain JSON built by pure functions: the revision map
 * (one cell per unit of the rollout, from the rows `rollout-guard get` computes, getView.ts), the
 * revisions with their counts, and the header. The page only draws it, so what it shows is tested here,
 * table by table, without a browser. The timeline is dashboardTimeline.ts, the list dashboardList.ts.
 */
import { KINDS, type TargetKind } from '../api/kinds.js';
import type { GuardStatus, UndoPlan, UndoRecord, UndoSkip } from '../api/types.js';
import { handUndoSteps } from '../domain/messages.js';
import type { GetView, NodeRow } from './getView.js';
import type { TimelineEntry } from './dashboardTimeline.js';

/**
 * The state a cell is marked with. `stuck`: a pod not Ready left on the revision the guard (or a person)
 * undid, which a StatefulSet's controller does not replace by itself after the revert.
 */
export type CellState = 'ready' | 'progressing' | 'blocked' | 'empty' | 'stuck';

/** Every state, in the legend's order. */
export const CELL_STATES: readonly CellState[] = ['ready', 'progressing', 'blocked', 'stuck', 'empty'];

/** One unit of the rollout: a node (DaemonSet), an ordinal (StatefulSet) or a pod (Deployment). */
export interface MapCell {
  /** The unit's name: the node, or the pod for an ordinal or a Deployment's pod. */
  unit: string;
  pod?: string;
  /** The node the pod runs on (a DaemonSet's unit is its node). */
  node?: string;
  revision?: number;
  hash?: string;
  /** Index of its revision in {@link GuardDetail.revisions}: its colour; -1 for a unit without a pod. */
  group: number;
  state: CellState;
  /** What `get` shows in STATUS: Running, ImagePullBackOff, NoPod … */
  status: string;
  cause?: string;
  owner?: string;
  message?: string;
}

/** One revision present on the units, newest first. */
export interface RevisionGroup {
  revision?: number;
  hash: string;
  images: string[];
  /** Units running it, of them Ready, and blocked (or stuck). */
  units: number;
  ready: number;
  blocked: number;
  /** The revision the rollout goes to. */
  current: boolean;
}

/** Everything the page shows of one guard. */
export interface GuardDetail {
  at: string;
  namespace: string;
  name: string;
  /** Why there is no map (a selector guard, a missing guard); the rest is then empty. */
  note?: string;
  kind?: TargetKind;
  target?: string;
  /** What one cell is: `node`, `ordinal`, `pod` (from the kind registry). */
  unit: string;
  /** What the page says when there is no cell, in the kind's words (`No node runs or should run this DaemonSet.`). */
  noUnits?: string;
  state: string;
  cause?: string;
  owner?: string;
  message?: string;
  counters?: { desired?: number; current?: number; updated?: number; ready?: number; available?: number };
  revisions: RevisionGroup[];
  cells: MapCell[];
  /** How many cells of each state. */
  counts: Record<CellState, number>;
  undoPlan?: UndoPlan;
  lastUndo?: UndoRecord;
  undoSkipped?: UndoSkip;
  /** What Report mode tells a person to run (the undo plan, by hand); empty without a plan. */
  commands: string[];
  timeline: TimelineEntry[];
  /** The guard as `kubectl describe` shows it, as text. */
  describe: string;
}

/** What one cell of `kind` is called: the noun of the kind registry's units, singular. */
export function unitNoun(kind: TargetKind): string {
  return KINDS[kind].units.replace(/s$/, '');
}

const zeroCounts = (): Record<CellState, number> => ({ ready: 0, progressing: 0, blocked: 0, stuck: 0, empty: 0 });

/**
 * The state of one row of `get`'s table. `left` holds the revisions a rollout moves away from (the ones
 * the guard undid, and the revision the current rollout started from, which after a revert is the broken
 * one); `current` the revision it goes to.
 */
export function cellState(row: Readonly<NodeRow>, left: ReadonlySet<string>, current: string | undefined): CellState {
  if (row.kind === 'empty') return 'empty';
  if (!row.ready && row.hash !== undefined && row.hash !== current && left.has(row.hash)) return 'stuck';
  if (row.kind === 'blocked') return 'blocked';
  return row.ready ? 'ready' : 'progressing';
}

/** The revisions a rollout of `status` moves away from: see {@link cellState}. */
export function leftRevisions(status: Readonly<GuardStatus> | undefined): Set<string> {
  const hashes = [...(status?.undoneRevisions ?? []), status?.lastUndo?.fromHash, status?.rollout?.fromRevision?.hash];
  return new Set(hashes.filter((h): h is string => h !== undefined && h !== ''));
}

/** The revisions on the units, newest first, from the view's generations and its rows. */
function revisionGroups(view: Readonly<GetView>, status: Readonly<GuardStatus> | undefined): RevisionGroup[] {
  const current = (status?.currentRevision ?? view.currentRevision)?.hash;
  const gens = view.revisions.length > 0 ? view.revisions : (status?.generations ?? []);
  const groups = new Map<string, RevisionGroup>();
  // The revisions the view counts, then any a row shows that it does not (a revision without a generation).
  const add = (hash: string, revision: number | undefined, images: readonly string[]): void => {
    if (groups.has(hash)) return;
    groups.set(hash, {
      ...(revision !== undefined ? { revision } : {}),
      hash,
      images: [...images],
      units: 0,
      ready: 0,
      blocked: 0,
      current: hash === current,
    });
  };
  for (const g of gens) add(g.hash, g.revision, g.images);
  for (const r of view.nodes) if (r.hash !== undefined) add(r.hash, r.revision, []);
  return [...groups.values()].sort((a, b) => (b.revision ?? -1) - (a.revision ?? -1) || a.hash.localeCompare(b.hash));
}

/**
 * The map of one view: a cell per row of `get`'s table, with its revision group and state, and the
 * revisions counted from the cells themselves, so the legend always adds up to the map. A pod is marked
 * stuck only where the target's controller waits on unready pods (`waitsOnUnreadyPods`, a StatefulSet
 * under OrderedReady, as the operator's attribution reads it): a DaemonSet's or a Deployment's
 * controller replaces a pod left unready on an old revision by itself.
 */
export function revisionMap(
  view: Readonly<GetView>,
  status: Readonly<GuardStatus> | undefined,
  waitsOnUnreadyPods = false,
): { revisions: RevisionGroup[]; cells: MapCell[]; counts: Record<CellState, number> } {
  const revisions = revisionGroups(view, status);
  const index = new Map(revisions.map((r, i) => [r.hash, i]));
  const left = waitsOnUnreadyPods ? leftRevisions(status) : new Set<string>();
  const current = (status?.currentRevision ?? view.currentRevision)?.hash;
  const onNodes = KINDS[view.daemonSet.kind].units === 'nodes';
  const counts = zeroCounts();
  const cells = view.nodes.map((row): MapCell => {
    const state = cellState(row, left, current);
    counts[state]++;
    // A DaemonSet's unit is its node; an ordinal's or a Deployment's pod runs on the node `get` names as host.
    const node = onNodes ? row.node : row.host;
    const group = row.hash === undefined ? -1 : (index.get(row.hash) ?? -1);
    const rev = revisions[group];
    if (rev) {
      rev.units++;
      if (row.ready) rev.ready++;
      if (state === 'blocked' || state === 'stuck') rev.blocked++;
    }
    return {
      unit: row.node,
      ...(row.pod !== undefined ? { pod: row.pod } : {}),
      ...(node !== undefined ? { node } : {}),
      ...(row.revision !== undefined ? { revision: row.revision } : {}),
      ...(row.hash !== undefined ? { hash: row.hash } : {}),
      group,
      state,
      status: row.status,
      ...(row.cause ? { cause: row.cause } : {}),
      ...(row.owner ? { owner: row.owner } : {}),
      ...(row.message ? { message: row.message } : {}),
    };
  });
  return { revisions, cells, counts };
}

/**
 * The commands Report mode tells a person to run for the guard's undo plan: `kubectl rollout undo`, and
 * where the target's controller waits on unready pods (`waitsOnUnreadyPods`, a StatefulSet under
 * OrderedReady), the pods of the broken revision it would never replace (the same steps the operator's
 * message gives, domain/decide/reportOnly.ts); none once the dry run of that undo was refused.
 */
export function reportCommands(
  kind: TargetKind,
  target: { namespace: string; name: string },
  plan: Readonly<UndoPlan> | undefined,
  cells: readonly MapCell[],
  waitsOnUnreadyPods = false,
): string[] {
  // A refused dry run (a manager that would revert it, an admission refusal) leaves nothing to run by hand.
  if (!plan || plan.dryRun === 'Rejected') return [];
  // The broken revision is the one the plan was made for.
  const stuck = waitsOnUnreadyPods ? cells.filter((c) => c.pod !== undefined && c.hash === plan.forHash && c.state !== 'ready') : [];
  return handUndoSteps(
    { kind, ...target },
    plan,
    stuck.map((c) => ({ pod: c.pod! })),
  );
}

/** The detail of a guard, from `get`'s view of it, the guard's stored status, its timeline and description. */
export function guardDetail(args: {
  namespace: string;
  name: string;
  view: Readonly<GetView>;
  status: Readonly<GuardStatus> | undefined;
  timeline: TimelineEntry[];
  describe: string;
  /** The target's controller waits on unready pods (the observation's `target.waitsOnUnreadyPods`). */
  waitsOnUnreadyPods?: boolean;
}): GuardDetail {
  const { view, status } = args;
  const g = view.guard;
  const kind = view.daemonSet.kind;
  const waits = args.waitsOnUnreadyPods === true;
  const { revisions, cells, counts } = revisionMap(view, status, waits);
  const ds = view.daemonSet;
  const undoPlan = g?.undoPlan;
  return {
    at: view.at,
    namespace: args.namespace,
    name: args.name,
    kind,
    target: ds.name,
    unit: unitNoun(kind),
    noUnits: `No ${KINDS[kind].words.noUnits}.`,
    state: g?.state ?? view.state,
    ...((g?.cause ?? view.cause) ? { cause: g?.cause ?? view.cause } : {}),
    ...((g?.owner ?? view.owner) ? { owner: g?.owner ?? view.owner } : {}),
    ...((g?.message ?? view.message) ? { message: g?.message ?? view.message } : {}),
    counters: { desired: ds.desired, current: ds.current, updated: ds.updated, ready: ds.ready, available: ds.available },
    revisions,
    cells,
    counts,
    ...(undoPlan ? { undoPlan } : {}),
    ...(g?.lastUndo ? { lastUndo: g.lastUndo } : {}),
    ...(g?.undoSkipped ? { undoSkipped: g.undoSkipped } : {}),
    commands: reportCommands(kind, { namespace: args.namespace, name: ds.name }, undoPlan, cells, waits),
    timeline: args.timeline,
    describe: args.describe,
  };
}

/** A detail with nothing to draw, and why: the guard does not exist, or selects its workloads by label. */
export function noteDetail(namespace: string, name: string, at: string, note: string, describe = ''): GuardDetail {
  return {
    at,
    namespace,
    name,
    note,
    unit: 'unit',
    state: '',
    revisions: [],
    cells: [],
    counts: zeroCounts(),
    commands: [],
    timeline: [],
    describe,
  };
}
