/**
 * How `rollout-guard list` shows the guards: the table `kubectl get rolloutguards` prints, with the
 * columns of the CRD's additionalPrinterColumns (config/crd/rolloutguards.yaml) and a NAMESPACE column
 * across namespaces; `wide` adds the columns of priority 1, as kubectl's `-o wide`. Also kubectl's
 * `-o name` and the list document of `-o json|yaml`. Pure: the guards are given as the API server sent them.
 */
import { API_VERSION, GROUP, GUARD_KIND } from '../api/names.js';
import { emitYaml } from './yaml.js';

/** A guard as listed: raw JSON, read defensively. */
export interface ListedGuard {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string };
  spec?: { targetRef?: { name?: string; kind?: string } };
  status?: {
    state?: string;
    desired?: number;
    updated?: number;
    ready?: number;
    cause?: string;
    owner?: string;
    blockedNodeCount?: number;
    message?: string;
  };
}

/** What `list -o` may say. */
export type ListOutput = 'text' | 'wide' | 'json' | 'yaml' | 'name';

/**
 * kubectl's age (apimachinery's HumanDuration): seconds up to 2 minutes, minutes and seconds up to 10,
 * minutes up to 3 hours, hours and minutes up to 8, hours up to 2 days, days and hours up to 8 days,
 * days up to 2 years, then years.
 */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(s / 3600);
  const d = Math.floor(h / 24);
  const withRest = (a: number, unit: string, b: number, sub: string): string => (b === 0 ? `${a}${unit}` : `${a}${unit}${b}${sub}`);
  if (s < 120) return `${s}s`;
  if (m < 10) return withRest(m, 'm', s % 60, 's');
  if (m < 180) return `${m}m`;
  if (h < 8) return withRest(h, 'h', m % 60, 'm');
  if (h < 48) return `${h}h`;
  if (h < 192) return withRest(d, 'd', h % 24, 'h');
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** kubectl's `<kind>.<group>/<name>`: what `-o name` prints per guard. */
export function guardResourceName(name: string): string {
  return `${GUARD_KIND.toLowerCase()}.${GROUP}/${name}`;
}

const num = (v: number | undefined): string => (v === undefined ? '' : String(v));

/** One row's cells, in the order of {@link listHeader}. */
function rowCells(g: ListedGuard, opts: { allNamespaces: boolean; wide: boolean; now: number }): string[] {
  const s = g.status ?? {};
  const created = Date.parse(g.metadata?.creationTimestamp ?? '');
  const cells = [
    g.metadata?.name ?? '',
    g.spec?.targetRef?.name ?? '',
    g.spec?.targetRef?.kind ?? '',
    s.state ?? '',
    num(s.desired),
    num(s.updated),
    num(s.ready),
    s.cause ?? '',
    s.owner ?? '',
    ...(opts.wide ? [num(s.blockedNodeCount), s.message ?? ''] : []),
    Number.isNaN(created) ? '<unknown>' : humanAge(opts.now - created),
  ];
  return opts.allNamespaces ? [g.metadata?.namespace ?? '', ...cells] : cells;
}

/** The header row: the CRD's printer columns, upper-cased as kubectl prints them. */
export function listHeader(opts: { allNamespaces: boolean; wide: boolean }): string[] {
  const cols = [
    'NAME',
    'TARGET',
    'KIND',
    'STATE',
    'DESIRED',
    'UPDATED',
    'READY',
    'CAUSE',
    'FAULT',
    ...(opts.wide ? ['BLOCKED', 'MESSAGE'] : []),
    'AGE',
  ];
  return opts.allNamespaces ? ['NAMESPACE', ...cols] : cols;
}

/** Namespace, then name: the order kubectl shows. */
export function sortGuards(guards: readonly ListedGuard[]): ListedGuard[] {
  const key = (g: ListedGuard): string => `${g.metadata?.namespace ?? ''}/${g.metadata?.name ?? ''}`;
  return [...guards].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The table, columns padded to their widest cell and three spaces apart, as kubectl's printer does. */
export function renderTable(guards: readonly ListedGuard[], opts: { allNamespaces: boolean; wide: boolean; now: number }): string {
  const rows = [listHeader(opts), ...sortGuards(guards).map((g) => rowCells(g, opts))];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

/** The document of `-o json|yaml`: a `List` of the guards as the API server sent them, as kubectl prints it. */
export function listDocument(guards: readonly ListedGuard[]): object {
  const items = sortGuards(guards).map((g) => ({ apiVersion: API_VERSION, kind: GUARD_KIND, ...g }));
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/**
 * What list prints on stdout for `output`, or undefined when there is nothing to print: a table of no
 * guards is kubectl's "No resources found" on stderr, while json and yaml print an empty list.
 */
export function renderList(
  guards: readonly ListedGuard[],
  output: ListOutput,
  opts: { allNamespaces: boolean; now: number },
): string | undefined {
  if (output === 'json') return JSON.stringify(listDocument(guards), null, 2);
  if (output === 'yaml') return emitYaml(listDocument(guards)).trimEnd();
  if (guards.length === 0) return undefined;
  if (output === 'name')
    return sortGuards(guards)
      .map((g) => guardResourceName(g.metadata?.name ?? ''))
      .join('\n');
  return renderTable(guards, { ...opts, wide: output === 'wide' });
}

/** kubectl's words for an empty table. */
export function noneFound(namespace: string | undefined): string {
  return namespace === undefined ? 'No resources found' : `No resources found in ${namespace} namespace.`;
}
