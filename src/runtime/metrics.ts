/**
 * Prometheus metrics. One registry per process (not the global default), so tests can create several
 * controllers without metric name clashes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { GUARD_STATES, UNDO_RESULTS, UNDO_SKIP_REASONS } from '../api/types.js';
import { EVICTION_OUTCOME_KINDS } from '../domain/eviction.js';
import { UNDO_OUTCOME_KINDS } from '../domain/undo.js';
import type { InformerStats } from '../k8s/informer.js';
import type { GuardTarget, ReconcileObserver } from '../reconcile/ports.js';
import { sameTarget, targetLabels, type GuardSeries, type VerdictLabels } from './metricLabels.js';

/** One informer's counters, with the resource and namespace that label its series. */
export interface InformerSample {
  resource: string;
  /** The watched namespace; `''` for all namespaces or a cluster-scoped resource. */
  namespace: string;
  /** The DaemonSet a pod watch serves (one per DaemonSet that needs its pods); `''` for the others. */
  daemonset?: string;
  stats: InformerStats;
}

export class Metrics implements ReconcileObserver {
  readonly registry = new Registry();
  readonly guardState = new Gauge({
    name: 'rollout_guard_state',
    help: 'Current state of each guard (1 for the state it is in, 0 otherwise); kind and target name the guarded workload, daemonset its name when it is a DaemonSet ("" otherwise).',
    labelNames: ['namespace', 'guard', 'kind', 'target', 'daemonset', 'state'] as const,
    registers: [this.registry],
  });
  /**
   * One series per guard, its verdict in labels: what an alert needs to say why (its cause, from the
   * closed list of cause classes, and whose fault it is) without a second query. Bounded: the label
   * values are the states, cause classes and owners of the API.
   */
  readonly verdict = new Gauge({
    name: 'rollout_guard_verdict_info',
    help: 'Each guard\'s verdict, always 1: its state, cause (status.cause, "" while none) and owner (whose fault: Revision, Node, ControlPlane, ConfiguredWait, Configuration, Unknown; "" while none).',
    labelNames: ['namespace', 'guard', 'kind', 'target', 'daemonset', 'state', 'cause', 'owner'] as const,
    registers: [this.registry],
  });
  readonly undoResult = new Gauge({
    name: 'rollout_guard_undo_result',
    help: "What became of each guard's latest undo (status.lastUndo.result): 1 for its result, 0 for the others; no series before a guard's first undo.",
    labelNames: ['namespace', 'guard', 'kind', 'target', 'daemonset', 'result'] as const,
    registers: [this.registry],
  });
  readonly stalls = new Counter({
    name: 'rollout_guard_stalls_detected_total',
    help: 'Rollouts that reached Stalled, by cause and by whose fault the stall is (Revision, Node, ControlPlane, ConfiguredWait, Configuration, Unknown).',
    labelNames: ['namespace', 'guard', 'kind', 'target', 'daemonset', 'cause', 'owner'] as const,
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: 'rollout_guard_failures_detected_total',
    help: 'Rollouts whose new revision crashed after starting on failedNodesThreshold Ready nodes (state Failed), by cause.',
    labelNames: ['namespace', 'guard', 'kind', 'target', 'daemonset', 'cause'] as const,
    registers: [this.registry],
  });
  readonly undosSkipped = new Counter({
    name: 'rollout_guard_undos_skipped_total',
    help: 'Stalled rollouts the guard did not undo, by reason (NotTheRevision, OwnedByController, OptedOut, AlreadyUndone, ...).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly detectionLatency = new Histogram({
    name: 'rollout_guard_detection_latency_seconds',
    help: "Time from a stalled rollout's deadline passing to the Stalled status being written.",
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly explanation = new Histogram({
    name: 'rollout_guard_explanation_seconds',
    help: "The operator's side of a first explanation, for each status write that newly names a node blocked for a definite reason (ImagePullBackOff, Unschedulable, a crash loop, …), by part: fromEvent (from the failing pod's watch event arriving to the write's answer: the operator's whole share), queue (the guard's wait for a worker since it was first queued), pass (gather and decide), write (the status PATCH), total (queue + pass + write).",
    labelNames: ['part'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly watchDelivery = new Histogram({
    name: 'rollout_guard_watch_delivery_seconds',
    help: "How far behind each informer's watch runs: from the API server's last write of an object (its newest write stamp: managedFields, a condition's transition, a graceful delete; whole seconds, so a lag reads 0 to 1 s high) to the watch event's arrival in the operator, per added or changed object.",
    labelNames: ['resource'] as const,
    buckets: [0.5, 1, 1.5, 2, 3, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'rollout_guard_reconcile_duration_seconds',
    help: 'Duration of one reconcile pass (gather, decide, act, persist).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'rollout_guard_reconcile_errors_total',
    help: 'Reconcile passes that failed, by error class.',
    labelNames: ['class'] as const,
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'rollout_guard_status_writes_total',
    help: 'Status patches sent (passes whose status did not change send none).',
    registers: [this.registry],
  });
  readonly statusWritesRefused = new Counter({
    name: 'rollout_guard_status_writes_refused_total',
    help: 'Status patches the API server refused for a reason only a person can fix: SchemaOutdated (the installed CRD is older than the operator and does not know a value it writes; apply config/crd).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly undos = new Counter({
    name: 'rollout_guard_undos_total',
    help: 'Undo attempts by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly evictions = new Counter({
    name: 'rollout_guard_evictions_total',
    help: "A forced rollback's evictions of a StatefulSet's stuck pod, by outcome (Evicted; Refused by a PodDisruptionBudget; Gone).",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** One histogram, not a counter and a seconds counter: its _count is the collections, its _sum their pause. */
  readonly idleCollection = new Histogram({
    name: 'rollout_guard_idle_collection_seconds',
    help: 'Full garbage collections run after a quiet spell to give back the memory a burst of work left reserved (--idle-collect-after-ms), by how long each paused the operator.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'rollout_guard_queue_depth',
    help: "Keys waiting in each controller's work queue (guards, policies).",
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly queueWait = new Histogram({
    name: 'rollout_guard_queue_wait_seconds',
    help: 'How long a key waited from being queued until a worker took it, by queue (guards, policies); a key queued while its own pass ran waits for that pass too.',
    labelNames: ['queue'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'rollout_guard_api_requests_total',
    help: 'Requests the operator sent to the API server, by verb and resource (watches counted when opened).',
    labelNames: ['verb', 'resource', 'code'] as const,
    registers: [this.registry],
  });
  readonly apiRequestDuration = new Histogram({
    name: 'rollout_guard_api_request_duration_seconds',
    help: "Latency of the operator's API requests from send to the end of the response, by verb and resource (watches not included).",
    labelNames: ['verb', 'resource'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'rollout_guard_leader',
    help: '1 while this replica holds the leader Lease.',
    registers: [this.registry],
  });

  /** Where {@link observeInformers} reads informer counters from at scrape time. */
  private informerSource: (() => ReadonlyArray<InformerSample>) | undefined;

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
    for (const outcome of UNDO_OUTCOME_KINDS) this.undos.inc({ outcome }, 0);
    for (const outcome of EVICTION_OUTCOME_KINDS) this.evictions.inc({ outcome }, 0);
    for (const reason of UNDO_SKIP_REASONS) this.undosSkipped.inc({ reason }, 0);
  }

  /**
   * Exports the estimated clock skew to the API server, read at scrape time. An undo is refused while it
   * is past its bound; this gauge is how a person sees that before a stall needs one.
   */
  /** Counts one API request, and its latency when it has one (a watch has none). */
  recordRequest(r: { verb: string; resource: string; code: string; seconds?: number }): void {
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code: r.code });
    if (r.seconds !== undefined) this.apiRequestDuration.observe({ verb: r.verb, resource: r.resource }, r.seconds);
  }

  /**
   * One watch event's lag: the server stamped the write with its own clock, so the arrival is read on it
   * too (`skewMs`: server − local, when estimated). Never below 0.
   */
  observeDelivery(resource: string, writtenAtMs: number, receivedAtMs: number, skewMs: number | undefined): void {
    this.watchDelivery.observe({ resource }, Math.max(0, receivedAtMs + (skewMs ?? 0) - writtenAtMs) / 1000);
  }

  observeClockSkew(source: () => number | undefined): void {
    new Gauge({
      name: 'rollout_guard_clock_skew_seconds',
      help: "API server time minus the operator's time, estimated from the Date header of API responses (positive: the operator is behind).",
      registers: [this.registry],
      collect() {
        const ms = source();
        if (ms === undefined) this.reset();
        else this.set(ms / 1000);
      },
    });
  }

  /** Sets the state gauge of one guard, and its verdict series (the state with its cause and owner). */
  setState(namespace: string, guard: string, target: Readonly<GuardTarget>, state: string, cause = '', owner = ''): void {
    const series = this.seriesOf(namespace, guard);
    // A guard pointed at another workload (name or kind): its state series under the old labels would
    // otherwise stay at 1.
    if (series.target !== undefined && !sameTarget(series.target, target)) this.removeState(namespace, guard, series.target);
    series.target = { kind: target.kind, name: target.name };
    const labels = { namespace, guard, ...targetLabels(target) };
    for (const s of GUARD_STATES) this.guardState.set({ ...labels, state: s }, s === state ? 1 : 0);
    const verdict: VerdictLabels = { ...labels, state, cause, owner };
    if (series.verdict && JSON.stringify(series.verdict) !== JSON.stringify(verdict)) this.verdict.remove(series.verdict);
    series.verdict = verdict;
    this.verdict.set(verdict, 1);
  }

  /** Sets the undo result gauge of one guard (after setState, which records its target). */
  setUndoResult(namespace: string, guard: string, target: Readonly<GuardTarget>, result: string | undefined): void {
    const series = this.seriesOf(namespace, guard);
    if (series.undoTarget !== undefined && (!sameTarget(series.undoTarget, target) || result === undefined)) {
      this.removeUndoResult(namespace, guard, series.undoTarget);
      delete series.undoTarget;
    }
    if (result === undefined) return;
    series.undoTarget = { kind: target.kind, name: target.name };
    const labels = { namespace, guard, ...targetLabels(target) };
    for (const r of UNDO_RESULTS) this.undoResult.set({ ...labels, result: r }, r === result ? 1 : 0);
  }

  private removeState(namespace: string, guard: string, target: Readonly<GuardTarget>): void {
    for (const s of GUARD_STATES) this.guardState.remove({ namespace, guard, ...targetLabels(target), state: s });
  }

  private removeUndoResult(namespace: string, guard: string, target: Readonly<GuardTarget>): void {
    for (const r of UNDO_RESULTS) this.undoResult.remove({ namespace, guard, ...targetLabels(target), result: r });
  }

  /**
   * Exports the informers' health, read at scrape time: how many objects each caches, how often it
   * relisted or restarted, and when it last heard from the API server. A watch that went quiet while
   * its resource keeps changing shows here before it shows as a guard that stopped moving.
   */
  observeInformers(source: () => ReadonlyArray<InformerSample>): void {
    if (this.informerSource) throw new Error('observeInformers: a source is already registered');
    this.informerSource = source;
    const read = (): ReadonlyArray<InformerSample> => this.informerSource?.() ?? [];
    /** Counter values already exported, so a scrape adds only what grew since the last one. */
    const exported = new Map<string, number>();
    const labelNames = ['resource', 'namespace', 'daemonset'] as const;
    const labels = (i: InformerSample): { resource: string; namespace: string; daemonset: string } => ({
      resource: i.resource,
      namespace: i.namespace,
      daemonset: i.daemonset ?? '',
    });
    new Gauge({
      name: 'rollout_guard_informer_objects',
      help: 'Objects held in each informer cache.',
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const i of read()) this.set(labels(i), i.stats.objects);
      },
    });
    new Gauge({
      name: 'rollout_guard_informer_last_event_timestamp_seconds',
      help: 'When each informer last received a watch event, a bookmark or a complete list (Unix seconds).',
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const i of read()) if (i.stats.lastEventAt !== undefined) this.set(labels(i), i.stats.lastEventAt / 1000);
      },
    });
    const counter = (name: string, help: string, value: (s: InformerSample['stats']) => number): void => {
      new Counter({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          const live = new Set<string>();
          for (const i of read()) {
            const l = labels(i);
            const key = `${name}\u0000${l.resource}\u0000${l.namespace}\u0000${l.daemonset}`;
            live.add(key);
            const now = value(i.stats);
            const before = exported.get(key) ?? 0;
            // inc(0) still creates the series, so a healthy informer shows 0 restarts rather than nothing.
            this.inc(l, Math.max(0, now - before));
            exported.set(key, Math.max(now, before));
          }
          // A pod watch that ended takes its series with it: watches come and go with rollouts, and their
          // series must not pile up. A later watch of the same DaemonSet starts again from 0 (a counter reset).
          for (const key of [...exported.keys()]) {
            if (!key.startsWith(`${name}\u0000`) || live.has(key)) continue;
            const [, resource = '', namespace = '', daemonset = ''] = key.split('\u0000');
            this.remove({ resource, namespace, daemonset });
            exported.delete(key);
          }
        },
      });
    };
    counter('rollout_guard_informer_relists_total', 'Complete lists per informer, the initial one included.', (s) => s.relists);
    counter(
      'rollout_guard_informer_restarts_total',
      'Informer restarts after an error, an expired watch (410) or a silent watch.',
      (s) => s.restarts,
    );
    counter(
      'rollout_guard_informer_watch_early_ends_total',
      'Watches the API server ended before their timeout (its watch cache drops a watcher that reads too slowly); each resumes from its resourceVersion.',
      (s) => s.earlyEnds,
    );
  }

  /** Drops the series of a deleted guard. */
  /**
   * Per guard, the cause (and owner) label values its counters were given: a deleted guard's series are
   * removed with it, or a cluster with churning guards (policies, GitOps) grows series without bound.
   */
  private readonly guardSeries = new Map<string, GuardSeries>();

  private seriesOf(namespace: string, guard: string): GuardSeries {
    const key = `${namespace}/${guard}`;
    let s = this.guardSeries.get(key);
    if (!s) {
      s = { stalls: new Set(), failures: new Set() };
      this.guardSeries.set(key, s);
    }
    return s;
  }

  /**
   * Counts a rollout that reached Stalled. A guard pointed at another workload keeps its counts under the
   * old target until it is deleted: they counted that workload's stalls, and removing them at the retarget
   * could drop an increment no scrape has read yet.
   */
  countStall(namespace: string, guard: string, target: Readonly<GuardTarget>, cause: string, owner: string): void {
    this.seriesOf(namespace, guard).stalls.add(JSON.stringify([target.kind, target.name, cause, owner]));
    this.stalls.inc({ namespace, guard, ...targetLabels(target), cause, owner });
  }

  /** Counts a rollout whose revision Failed (kept across a retarget, as {@link countStall}). */
  countFailure(namespace: string, guard: string, target: Readonly<GuardTarget>, cause: string): void {
    this.seriesOf(namespace, guard).failures.add(JSON.stringify([target.kind, target.name, cause]));
    this.failures.inc({ namespace, guard, ...targetLabels(target), cause });
  }

  /** Removes every series of a deleted guard. */
  forgetGuard(namespace: string, guard: string): void {
    const series = this.guardSeries.get(`${namespace}/${guard}`);
    if (!series) return;
    if (series.target !== undefined) this.removeState(namespace, guard, series.target);
    if (series.verdict !== undefined) this.verdict.remove(series.verdict);
    if (series.undoTarget !== undefined) this.removeUndoResult(namespace, guard, series.undoTarget);
    for (const k of series.stalls) {
      const [kind, name, cause, owner] = JSON.parse(k) as [GuardTarget['kind'], string, string, string];
      this.stalls.remove({ namespace, guard, ...targetLabels({ kind, name }), cause, owner });
    }
    for (const k of series.failures) {
      const [kind, name, cause] = JSON.parse(k) as [GuardTarget['kind'], string, string];
      this.failures.remove({ namespace, guard, ...targetLabels({ kind, name }), cause });
    }
    this.guardSeries.delete(`${namespace}/${guard}`);
  }
}
