/**
 * One guard as the dashboard watches it: the same reads as `rollout-guard get rg/NAME --watch` (a
 * GetSource: informers on the guard's workload, its pods, revisions and nodes, and the guard), the same
 * re-render loop (getWatch.ts: changes debounced, and a render when decide's next deadline passes), and
 * each new detail handed to every browser viewing the guard. The hub (dashboardHub.ts) opens one per
 * guard viewed, shared by all its viewers, and stops it when the last leaves.
 */
import type { Logger } from 'pino';
import type { GuardStatus } from '../api/types.js';
import type { SlimGuard } from '../api/objects.js';
import { GUARD_KIND } from '../api/names.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { type Clock } from '../reconcile/ports.js';
import type { Verdict } from './command.js';
import { describeGuard } from './dashboardDescribe.js';
import { isAbout, timeline, type SeenState, type TimelineEvent } from './dashboardTimeline.js';
import { guardDetail, type GuardDetail } from './dashboardView.js';
import { GetSource } from './getSource.js';
import { buildView } from './getView.js';
import { Rerender } from './getWatch.js';

/** What a guard watch reads from the hub's shared informers. */
export interface SharedReads {
  clock: Clock;
  /** The guard as the list informer has it. */
  guard: (namespace: string, name: string) => Readonly<SlimGuard> | undefined;
  /** The Events of a namespace, from the one Events informer. */
  events: (namespace: string) => ReadonlyArray<Readonly<TimelineEvent>>;
  /** The states the hub saw the guard in, oldest first. */
  seen: (namespace: string, name: string) => readonly SeenState[];
}

export class GuardWatch {
  private readonly viewers = new Set<(d: GuardDetail) => void>();
  private latest: GuardDetail | undefined;
  /** The last detail sent, without its time: a render that changes nothing else sends nothing. */
  private lastSent = '';
  /** decide's status of the previous pass, as `get --watch` carries it from pass to pass. */
  private status: GuardStatus = {};
  private readonly rerender: Rerender;

  private constructor(
    private readonly namespace: string,
    private readonly name: string,
    private readonly source: GetSource,
    private readonly reads: SharedReads,
  ) {
    this.rerender = new Rerender(() => this.render());
  }

  /** Opens and starts the watch of guard `namespace/name`; or why it has no map to show (not found, a selector guard). */
  static async open(namespace: string, name: string, client: ApiClient, log: Logger, reads: SharedReads): Promise<GuardWatch | Verdict> {
    const source = await GetSource.open({ kind: 'RolloutGuard', namespace, name }, client, log);
    if (!(source instanceof GetSource)) return source;
    const w = new GuardWatch(namespace, name, source, reads);
    source.onChange(w.rerender.schedule);
    source.start();
    try {
      await source.synced();
    } catch (e) {
      await source.stop();
      throw e;
    }
    w.rerender.now();
    return w;
  }

  /** Adds a viewer, who gets the latest detail at once and every change after it. */
  add(fn: (d: GuardDetail) => void): void {
    this.viewers.add(fn);
    if (this.latest) fn(this.latest);
  }

  /** Removes a viewer; returns how many are left. */
  remove(fn: (d: GuardDetail) => void): number {
    this.viewers.delete(fn);
    return this.viewers.size;
  }

  /** Something the shared informers hold changed (an Event, the guard): render again, debounced. */
  readonly changed = (): void => this.rerender.schedule();

  /** Whether an Event is about this guard or its workload: only those change its timeline and describe. */
  concerns(e: Readonly<TimelineEvent>): boolean {
    return isAbout(e, { namespace: this.namespace, name: this.name }, { kind: this.source.targetKind, name: this.source.target });
  }

  /** One render: `get`'s view, then the dashboard's detail of it; returns decide's next deadline. */
  private render(): number | undefined {
    const now = this.reads.clock.now();
    const { obs, decision } = this.source.pass(this.status, now);
    // A pass set aside until the caches agree shows nothing new; the next change renders again.
    if (decision.deferred && this.latest) return decision.requeueAfterMs;
    this.status = decision.status;
    const view = buildView({
      kind: 'RolloutGuard',
      targetKind: this.source.targetKind,
      namespace: this.namespace,
      name: this.name,
      obs,
      status: this.status,
      now,
      ...this.source.guardsShown(),
    });
    const guard = this.reads.guard(this.namespace, this.name);
    const events = this.reads.events(this.namespace);
    const target = { kind: this.source.targetKind, name: this.source.target };
    const detail = guardDetail({
      namespace: this.namespace,
      name: this.name,
      view,
      status: guard?.status,
      waitsOnUnreadyPods: obs.kind === 'Target' && obs.target.waitsOnUnreadyPods === true,
      timeline: timeline(events, { namespace: this.namespace, name: this.name }, target, this.reads.seen(this.namespace, this.name)),
      describe: guard
        ? describeGuard(
            guard,
            events.filter((e) => e.involved.kind === GUARD_KIND && e.involved.name === this.name),
            now,
          )
        : '',
    });
    const same = JSON.stringify({ ...detail, at: '', describe: '' });
    this.latest = detail;
    if (same !== this.lastSent) {
      this.lastSent = same;
      for (const v of this.viewers) v(detail);
    }
    return decision.requeueAfterMs;
  }

  async stop(): Promise<void> {
    this.rerender.stop();
    await this.source.stop();
  }
}
