/**
 * The dashboard's timeline of one guard: the Events of the guard and of its workload, oldest first, with
 * the states the dashboard saw the guard pass through while it ran, and the stall, the undo and any
 * eviction marked. Pure: the Events come from the dashboard's one Events informer (dashboardHub.ts).
 *
 * The operator writes each transition's Event on the guard and a mirror of it on the workload (so that
 * `kubectl describe ds` shows it too): the timeline shows such a pair once, naming both objects.
 */
import type { Meta } from '../api/objects.js';
import { GUARD_KIND } from '../api/names.js';
import { Reason } from '../api/reasons.js';

/** An Event as the dashboard caches it: who it is about, what happened, when and how often. */
export interface TimelineEvent {
  metadata: Meta;
  involved: { kind: string; name: string; namespace?: string };
  reason: string;
  type: string;
  message: string;
  /** When it last happened. */
  at: string;
  count: number;
  /** Who reported it, as `kubectl describe` shows it under From. */
  source: string;
}

/** What a mark on the timeline says, beside the Event's own reason. */
export type TimelineMark = 'stall' | 'undo' | 'eviction' | 'recovered' | 'state';

/** One entry of the timeline. */
export interface TimelineEntry {
  at: string;
  /** The objects it was reported on, `Kind/name`. */
  on: string[];
  /** The Event's reason, or `State` for a state the dashboard saw. */
  reason: string;
  message: string;
  warning: boolean;
  count: number;
  mark?: TimelineMark;
}

/** A state of the guard, and when the dashboard first saw it. */
export interface SeenState {
  at: string;
  state: string;
}

/** The most entries shown: Events expire after an hour, but a busy guard can still have many. */
export const MAX_TIMELINE = 200;

/** Events longer than this are cut: the page shows a line, `kubectl describe` the rest. */
const MAX_MESSAGE = 1024;

/** Keeps what the timeline shows of a core v1 Event. */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- input is raw JSON from the API server, read defensively */
export function slimTimelineEvent(raw: any): TimelineEvent {
  const io = raw?.involvedObject ?? raw?.regarding ?? {};
  const message = String(raw?.message ?? raw?.note ?? '');
  const m = raw?.metadata ?? {};
  return {
    metadata: {
      name: String(m.name ?? ''),
      ...(m.namespace ? { namespace: String(m.namespace) } : {}),
      ...(m.uid ? { uid: String(m.uid) } : {}),
      ...(m.resourceVersion ? { resourceVersion: String(m.resourceVersion) } : {}),
    },
    involved: { kind: String(io.kind ?? ''), name: String(io.name ?? ''), ...(io.namespace ? { namespace: String(io.namespace) } : {}) },
    reason: String(raw?.reason ?? ''),
    type: String(raw?.type ?? 'Normal'),
    message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message,
    at: String(raw?.lastTimestamp ?? raw?.series?.lastObservedTime ?? raw?.eventTime ?? raw?.firstTimestamp ?? m.creationTimestamp ?? ''),
    count: Number(raw?.count ?? raw?.series?.count ?? 1) || 1,
    // kubectl describe's From: the source's component, else (an events.k8s.io Event) its reporting controller.
    source: String(raw?.source?.component || raw?.reportingComponent || raw?.reportingController || ''),
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access */

const MARKS: Readonly<Record<string, TimelineMark>> = {
  [Reason.RolloutStalled]: 'stall',
  [Reason.RevisionFailed]: 'stall',
  [Reason.RollbackStalled]: 'stall',
  [Reason.UndoStarted]: 'undo',
  [Reason.UndoComplete]: 'undo',
  [Reason.UndoFailed]: 'undo',
  [Reason.UndoSkipped]: 'undo',
  [Reason.PodEvicted]: 'eviction',
  [Reason.EvictionRefused]: 'eviction',
  [Reason.RolloutComplete]: 'recovered',
  [Reason.RolloutResumed]: 'recovered',
};

/** An Event's time in ms; one without a readable time sorts first. */
const time = (at: string): number => Date.parse(at) || 0;

/** The mark of an Event's reason, if it has one. */
export function markOf(reason: string): TimelineMark | undefined {
  return MARKS[reason];
}

/** Whether Event `e` is about guard `guard` (namespace and name) or its workload `target`. */
export function isAbout(
  e: Readonly<TimelineEvent>,
  guard: { namespace: string; name: string },
  target: { kind: string; name: string } | undefined,
): boolean {
  if ((e.involved.namespace ?? e.metadata.namespace) !== guard.namespace) return false;
  const { kind, name } = e.involved;
  return (kind === GUARD_KIND && name === guard.name) || (target !== undefined && kind === target.kind && name === target.name);
}

/**
 * The timeline of guard `guard` (namespace and name) and its workload `target`: the Events about either,
 * a mirrored pair shown once, and the states seen, oldest first, the newest {@link MAX_TIMELINE} kept.
 */
export function timeline(
  events: ReadonlyArray<Readonly<TimelineEvent>>,
  guard: { namespace: string; name: string },
  target: { kind: string; name: string } | undefined,
  seen: readonly SeenState[] = [],
): TimelineEntry[] {
  const byKey = new Map<string, TimelineEntry>();
  for (const e of events) {
    if (!isAbout(e, guard, target)) continue;
    const on = `${e.involved.kind}/${e.involved.name}`;
    const key = `${e.at}\u0000${e.reason}\u0000${e.message}`;
    const had = byKey.get(key);
    if (had) {
      if (!had.on.includes(on)) had.on.push(on);
      continue;
    }
    const mark = markOf(e.reason);
    byKey.set(key, {
      at: e.at,
      on: [on],
      reason: e.reason,
      message: e.message,
      warning: e.type === 'Warning',
      count: e.count,
      ...(mark ? { mark } : {}),
    });
  }
  const states = seen.map((s): TimelineEntry => ({
    at: s.at,
    on: [`${GUARD_KIND}/${guard.name}`],
    reason: 'State',
    message: s.state,
    warning: false,
    count: 1,
    mark: 'state',
  }));
  const all = [...byKey.values(), ...states];
  for (const e of all) e.on.sort((a, b) => (a.startsWith(GUARD_KIND) ? -1 : b.startsWith(GUARD_KIND) ? 1 : a.localeCompare(b)));
  return all.sort((a, b) => time(a.at) - time(b.at) || a.reason.localeCompare(b.reason)).slice(-MAX_TIMELINE);
}
