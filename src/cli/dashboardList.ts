/**
 * The dashboard's list of guards, as plain JSON built by a pure function from the guards cached: the
 * columns of `rollout-guard list` (listRender.ts) plus what made each guard (a policy, a guard with a
 * selector, or nothing: created as it is), so the page filters and sorts without asking the server again.
 */
import { isSelectorGuard, type LabelSelector, type SlimGuard } from '../api/objects.js';
import { DEFAULT_KIND } from '../api/kinds.js';
import { POLICY_LABEL, SELECTOR_GUARD_LABEL } from '../api/names.js';

/** One row of the list. */
export interface GuardRow {
  namespace: string;
  name: string;
  /** The target's kind; for a guard with a selector, the kinds it chooses (the default kind when it lists none). */
  kind: string;
  /** The target's name; for a guard with a selector, its selector. */
  target: string;
  state: string;
  cause: string;
  owner: string;
  /** Creation time (the page counts the age from it, as time passes). */
  created: string;
  /** What made the guard: `policy NAME`, `selector guard NAME`, or `selector a=b` for a guard with one. */
  madeBy: string;
  desired?: number;
  updated?: number;
  ready?: number;
  message: string;
  /** Whether the page can draw its map: a guard with a selector judges no workload itself. */
  mapped: boolean;
}

/** The list frame pushed to every browser viewing the list. */
export interface GuardList {
  at: string;
  /** The namespace shown, absent for every namespace (-A). */
  namespace?: string;
  guards: GuardRow[];
}

/** A label selector in kubectl's words: `app=a,tier in (x,y)`. */
export function selectorText(s: Readonly<LabelSelector> | undefined): string {
  if (!s) return '';
  const labels = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const exprs = (s.matchExpressions ?? []).map((e) => {
    const values = e.values?.length ? ` (${e.values.join(',')})` : '';
    return `${e.key} ${e.operator.toLowerCase()}${values}`;
  });
  return [...labels, ...exprs].join(',') || '(every workload)';
}

/** What made `g`: the policy or the selector guard whose label it carries, or its own selector. */
export function madeBy(g: Readonly<SlimGuard>): string {
  const labels = g.metadata.labels ?? {};
  if (labels[POLICY_LABEL]) return `policy ${labels[POLICY_LABEL]}`;
  if (labels[SELECTOR_GUARD_LABEL]) return `selector guard ${labels[SELECTOR_GUARD_LABEL]}`;
  if (isSelectorGuard(g)) return `selector ${selectorText(g.spec.selector)}`;
  return '';
}

/** One row from a guard as cached. */
export function guardRow(g: Readonly<SlimGuard>): GuardRow {
  const s = g.status ?? {};
  const selector = isSelectorGuard(g);
  return {
    namespace: g.metadata.namespace ?? '',
    name: g.metadata.name,
    kind: selector ? (g.spec.targetKinds ?? [DEFAULT_KIND]).join(',') : (g.spec.targetRef?.kind ?? ''),
    target: selector ? selectorText(g.spec.selector) : (g.spec.targetRef?.name ?? ''),
    state: s.state ?? '',
    cause: s.cause ?? '',
    owner: s.owner ?? '',
    created: g.metadata.creationTimestamp ?? '',
    madeBy: madeBy(g),
    ...(s.desired !== undefined ? { desired: s.desired } : {}),
    ...(s.updated !== undefined ? { updated: s.updated } : {}),
    ...(s.ready !== undefined ? { ready: s.ready } : {}),
    message: s.message ?? '',
    mapped: !selector,
  };
}

/** The list of `guards`, namespace then name, as kubectl orders it; guards being deleted are left out. */
export function guardList(guards: ReadonlyArray<Readonly<SlimGuard>>, at: string, namespace: string | undefined): GuardList {
  const rows = guards
    .filter((g) => !g.metadata.deletionTimestamp)
    .map(guardRow)
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { at, ...(namespace !== undefined ? { namespace } : {}), guards: rows };
}
