/**
 * The dashboard's one set of watches, shared by every browser: one RolloutGuard informer for the list,
 * one Events informer for the timelines (both over the namespace shown, or every namespace), and one
 * {@link GuardWatch} per guard being viewed, opened for its first viewer and stopped when its last one
 * leaves. Browsers subscribe here; the server (dashboardServer.ts) pushes what they are handed. It
 * only lists and watches: nothing here writes to the cluster.
 */
import type { Logger } from 'pino';
import type { SlimGuard } from '../api/objects.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { coreEventsPath, guardsPath } from '../k8s/apiPaths.js';
import { Informer } from '../k8s/informer.js';
import { slimGuard } from '../k8s/slim.js';
import { type Clock } from '../reconcile/ports.js';
import { ExitCode, type Verdict } from './command.js';
import { GuardWatch } from './dashboardGuardWatch.js';
import { guardList, type GuardList } from './dashboardList.js';
import { slimTimelineEvent, type SeenState, type TimelineEvent } from './dashboardTimeline.js';
import { noteDetail, type GuardDetail } from './dashboardView.js';
import { Rerender } from './getWatch.js';

/** What the server needs of the hub; a fake of it serves the server's own tests. */
export interface DashboardFeed {
  /** The list now. */
  list(): GuardList;
  /** Calls `fn` with the list now and on every change; returns how to stop. */
  watchList(fn: (l: GuardList) => void): () => void;
  /** Calls `fn` with guard `namespace/name`'s detail now and on every change; resolves to how to stop. */
  watchGuard(namespace: string, name: string, fn: (d: GuardDetail) => void): Promise<() => Promise<void>>;
}

/** The states kept per guard for its timeline: a guard flapping all night keeps the latest. */
const MAX_SEEN = 50;

/**
 * Events about pods are left out by the API server: the timeline shows the guard's and its workload's,
 * and a rollout over thousands of nodes reports many more about its pods.
 */
const EVENT_FIELD_SELECTOR = 'involvedObject.kind!=Pod';

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

interface Viewed {
  watch: Promise<GuardWatch | Verdict>;
  viewers: number;
}

/** A viewer of a guard that did not exist when it asked: subscribed again once the guard appears. */
interface Waiter {
  fn: (d: GuardDetail) => void;
  /** How to stop the watch it got once the guard appeared; undefined while it waits. */
  stop?: () => Promise<void>;
  /** It left: a watch it gets later is stopped at once. */
  left: boolean;
}

/** Tells a viewed guard's watch, once open, that something it reads changed (when `about` says it is its). */
function poke(v: Viewed, about: (w: GuardWatch) => boolean = () => true): void {
  // Only schedules a render: nothing to await, and a watch that failed to open has told its viewers why.
  void v.watch.then(
    (w) => (w instanceof GuardWatch && about(w) ? w.changed() : undefined),
    () => undefined,
  );
}

export class DashboardHub implements DashboardFeed {
  private readonly guards: Informer<SlimGuard>;
  private readonly events: Informer<TimelineEvent>;
  private readonly viewed = new Map<string, Viewed>();
  private readonly listViewers = new Set<(l: GuardList) => void>();
  private readonly seenStates = new Map<string, SeenState[]>();
  /** Viewers of guards not found when asked for, by guard: a guard created after the page opened shows up in it. */
  private readonly waiting = new Map<string, Set<Waiter>>();
  /** Debounces a burst of guard changes into one list push. */
  private readonly listPush: Rerender;

  /** `namespace` undefined: every namespace (-A). */
  constructor(
    private readonly client: ApiClient,
    private readonly namespace: string | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    const backoff = { initialMs: 500, maxMs: 10_000 };
    this.guards = new Informer<SlimGuard>(
      client,
      { name: 'rolloutguards', listPath: guardsPath(namespace), slim: slimGuard, backoff },
      log,
    );
    this.events = new Informer<TimelineEvent>(
      client,
      { name: 'events', listPath: coreEventsPath(namespace), fieldSelector: EVENT_FIELD_SELECTOR, slim: slimTimelineEvent, backoff },
      log,
    );
    this.listPush = new Rerender(() => {
      const l = this.list();
      for (const fn of this.listViewers) fn(l);
      return undefined;
    });
    this.guards.onEvent((ev) => {
      const g = ev.obj;
      const k = key(g.metadata.namespace ?? '', g.metadata.name);
      if (ev.type !== 'delete') this.saw(k, g.status?.state);
      this.listPush.schedule();
      const v = this.viewed.get(k);
      if (v) poke(v);
      if (ev.type !== 'delete') this.resubscribe(g.metadata.namespace ?? '', g.metadata.name);
    });
    this.events.onEvent((ev) => {
      // Only the guards an Event is about render again: a busy namespace's other Events cost them nothing.
      for (const v of this.viewed.values()) poke(v, (w) => w.concerns(ev.obj));
    });
  }

  /** Records a state of guard `k` the first time it is seen in it. */
  private saw(k: string, state: string | undefined): void {
    if (!state) return;
    const seen = this.seenStates.get(k) ?? [];
    if (seen[seen.length - 1]?.state === state) return;
    seen.push({ at: new Date(this.clock.now()).toISOString(), state });
    this.seenStates.set(k, seen.slice(-MAX_SEEN));
  }

  start(): void {
    this.guards.start();
    this.events.start();
  }

  /** Waits for the first list of the guards and the Events. */
  async synced(): Promise<void> {
    await Promise.all([this.guards.waitForSync(), this.events.waitForSync()]);
  }

  list(): GuardList {
    return guardList(this.guards.list(this.namespace), new Date(this.clock.now()).toISOString(), this.namespace);
  }

  watchList(fn: (l: GuardList) => void): () => void {
    this.listViewers.add(fn);
    fn(this.list());
    return () => this.listViewers.delete(fn);
  }

  async watchGuard(namespace: string, name: string, fn: (d: GuardDetail) => void): Promise<() => Promise<void>> {
    const at = (): string => new Date(this.clock.now()).toISOString();
    if (this.namespace !== undefined && namespace !== this.namespace) {
      fn(noteDetail(namespace, name, at(), `the dashboard shows namespace ${this.namespace} only (-A shows every namespace)`));
      return () => Promise.resolve();
    }
    const k = key(namespace, name);
    let v = this.viewed.get(k);
    if (!v) {
      v = { watch: this.open(namespace, name), viewers: 0 };
      this.viewed.set(k, v);
    }
    v.viewers++;
    const w = await v.watch.catch((e: unknown): Verdict => ({ code: ExitCode.Failure, verdict: 'error', message: String(e) }));
    if (!(w instanceof GuardWatch)) {
      fn(noteDetail(namespace, name, at(), w.message));
      await this.leave(k, v);
      if (w.code !== ExitCode.NotFound) return () => Promise.resolve();
      // Not there yet: the guard informer's next sight of it subscribes this viewer again.
      const waiter: Waiter = { fn, left: false };
      const set = this.waiting.get(k) ?? new Set<Waiter>();
      this.waiting.set(k, set.add(waiter));
      return async () => {
        waiter.left = true;
        this.waiting.get(k)?.delete(waiter);
        await waiter.stop?.();
      };
    }
    w.add(fn);
    let left = false;
    return async () => {
      if (left) return;
      left = true;
      w.remove(fn);
      await this.leave(k, v);
    };
  }

  /** Guard `namespace/name` was seen: the viewers waiting for it are subscribed to it now. */
  private resubscribe(namespace: string, name: string): void {
    const k = key(namespace, name);
    const set = this.waiting.get(k);
    if (!set) return;
    this.waiting.delete(k);
    for (const waiter of set) {
      // Not awaited: the informer's handler must not wait for a watch to open; the outcome is the viewer's.
      void this.watchGuard(namespace, name, waiter.fn).then(async (stop) => {
        if (waiter.left) await stop();
        else waiter.stop = stop;
      });
    }
  }

  /** Opens the watch of a guard, its reads shared with the hub's informers. */
  private open(namespace: string, name: string): Promise<GuardWatch | Verdict> {
    return GuardWatch.open(namespace, name, this.client, this.log, {
      clock: this.clock,
      guard: (ns, n) => this.guards.get(ns, n),
      events: (ns) => this.events.list(ns),
      seen: (ns, n) => this.seenStates.get(key(ns, n)) ?? [],
    });
  }

  /** One viewer of `k` left: the last one stops its watch. */
  private async leave(k: string, v: Viewed): Promise<void> {
    v.viewers--;
    if (v.viewers > 0) return;
    if (this.viewed.get(k) === v) this.viewed.delete(k);
    const w = await v.watch.catch(() => undefined);
    if (w instanceof GuardWatch) await w.stop();
  }

  /** How many guards are watched now (one per guard viewed, whatever the number of browsers). */
  get watchedGuards(): number {
    return this.viewed.size;
  }

  async stop(): Promise<void> {
    this.listPush.stop();
    this.waiting.clear();
    const watches = [...this.viewed.values()].map((v) => v.watch.then((w) => (w instanceof GuardWatch ? w.stop() : undefined)));
    this.viewed.clear();
    await Promise.allSettled([...watches, this.guards.stop(), this.events.stop()]);
  }
}
