/**
 * Dashboard details made up for the tests that need no cluster: a DaemonSet rollout of any size over
 * two revisions, with a share of its nodes blocked and empty, as the page would receive it. Used to test
 * the server and to measure how long the browser takes to draw a map of 5,000 nodes.
 */
import type { DashboardFeed } from '../../src/cli/dashboardHub.js';
import type { GuardList } from '../../src/cli/dashboardList.js';
import type { CellState, GuardDetail, MapCell } from '../../src/cli/dashboardView.js';

/** A stalled DaemonSet rollout over `n` nodes: one node in 50 blocked on the new revision, one in 100 empty. */
export function bigDetail(n: number, at = '2026-01-01T00:00:00.000Z'): GuardDetail {
  const counts: Record<CellState, number> = { ready: 0, progressing: 0, blocked: 0, stuck: 0, empty: 0 };
  const cells: MapCell[] = [];
  for (let i = 0; i < n; i++) {
    const unit = `node-${i + 1}`;
    const state: CellState = i % 100 === 99 ? 'empty' : i % 50 === 0 ? 'blocked' : i % 10 === 3 ? 'progressing' : 'ready';
    counts[state]++;
    const onNew = state === 'blocked' || i % 7 === 0;
    cells.push({
      unit,
      node: unit,
      ...(state === 'empty' ? {} : { pod: `decoder-${i.toString(36)}`, revision: onNew ? 2 : 1, hash: onNew ? 'new2' : 'old1' }),
      group: state === 'empty' ? -1 : onNew ? 0 : 1,
      state,
      status:
        state === 'blocked' ? 'ImagePullBackOff' : state === 'empty' ? 'NoPod' : state === 'progressing' ? 'ContainerCreating' : 'Running',
      ...(state === 'blocked'
        ? { cause: 'ImagePullFailure', owner: 'Revision', message: 'Back-off pulling image "registry.local/decoder:2-broken"' }
        : {}),
    });
  }
  // The order `get` sorts rows in: the newest revision first, the units without a pod last.
  cells.sort((a, b) => (a.group === -1 ? 1 : 0) - (b.group === -1 ? 1 : 0) || a.group - b.group || a.unit.localeCompare(b.unit));
  const count = (g: number, f: (c: MapCell) => boolean): number => cells.filter((c) => c.group === g && f(c)).length;
  return {
    at,
    namespace: 'bench',
    name: 'decoder',
    kind: 'DaemonSet',
    target: 'decoder',
    unit: 'node',
    state: 'Stalled',
    cause: 'ImagePullFailure',
    owner: 'Revision',
    message: 'Rollout to revision 2 (new2) has made no progress for 10m.',
    counters: { desired: n, current: n, updated: count(0, () => true), ready: counts.ready, available: counts.ready },
    revisions: [
      {
        revision: 2,
        hash: 'new2',
        images: ['registry.local/decoder:2-broken'],
        units: count(0, () => true),
        ready: count(0, (c) => c.state === 'ready'),
        blocked: count(0, (c) => c.state === 'blocked'),
        current: true,
      },
      {
        revision: 1,
        hash: 'old1',
        images: ['registry.local/decoder:1'],
        units: count(1, () => true),
        ready: count(1, (c) => c.state === 'ready'),
        blocked: 0,
        current: false,
      },
    ],
    cells,
    counts,
    commands: ['kubectl rollout undo daemonset/decoder -n bench --to-revision=1'],
    timeline: [
      {
        at,
        on: ['RolloutGuard/decoder', 'DaemonSet/decoder'],
        reason: 'RolloutStalled',
        message: 'Rollout to revision 2 has made no progress',
        warning: true,
        count: 1,
        mark: 'stall',
      },
    ],
    describe: 'Name:         decoder\nNamespace:    bench',
  };
}

/** A feed that serves `detail` for every guard and a list of that one guard; records the viewers. */
export class FixedFeed implements DashboardFeed {
  viewers = 0;
  private readonly guardFns = new Set<(d: GuardDetail) => void>();
  constructor(public detail: GuardDetail) {}

  list(): GuardList {
    const d = this.detail;
    return {
      at: d.at,
      guards: [
        {
          namespace: d.namespace,
          name: d.name,
          kind: d.kind ?? '',
          target: d.target ?? '',
          state: d.state,
          cause: d.cause ?? '',
          owner: d.owner ?? '',
          created: d.at,
          madeBy: '',
          message: d.message ?? '',
          mapped: true,
        },
      ],
    };
  }

  watchList(fn: (l: GuardList) => void): () => void {
    fn(this.list());
    return () => undefined;
  }

  watchGuard(_ns: string, _name: string, fn: (d: GuardDetail) => void): Promise<() => Promise<void>> {
    this.viewers++;
    this.guardFns.add(fn);
    fn(this.detail);
    return Promise.resolve(() => {
      this.viewers--;
      this.guardFns.delete(fn);
      return Promise.resolve();
    });
  }

  /** Pushes a new detail to every viewer. */
  push(d: GuardDetail): void {
    this.detail = d;
    for (const fn of this.guardFns) fn(d);
  }
}
