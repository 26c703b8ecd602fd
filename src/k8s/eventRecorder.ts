/**
 * Emits events.k8s.io/v1 Events on the guard and, mirrored, on its DaemonSet so that
 * `kubectl describe ds` tells the same story. decide() emits Events only on transitions, so there is
 * no aggregation here; a failure to emit is logged and never fails the reconcile (Events complement
 * status, they do not replace it).
 */
import type { Logger } from 'pino';
import type { PlannedEvent } from '../domain/types.js';
import type { ApiClient } from './apiClient.js';
import { API_VERSION } from './slim.js';

/** The reportingController of our Events. */
export const CONTROLLER_NAME = 'rolloutguard.dev/rollout-guard';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
}

let seq = 0;
/** Hex of the time in nanoseconds plus a per-process sequence, as client-go names Events. */
function eventSuffix(ms: number): string {
  seq = (seq + 1) % 1_000_000;
  return (BigInt(Math.trunc(ms)) * 1_000_000n + BigInt(seq)).toString(16);
}

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server's parser requires. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class EventRecorder {
  constructor(
    private readonly client: ApiClient,
    private readonly instance: string,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** Emits each event on the guard, and on the DaemonSet when `onTarget` and the target exists. */
  async emit(guard: ObjectRef, target: ObjectRef | undefined, events: readonly PlannedEvent[]): Promise<void> {
    for (const e of events) {
      await this.create(guard, target, e);
      if (e.onTarget && target) await this.create(target, guard, e);
    }
  }

  private async create(regarding: ObjectRef, related: ObjectRef | undefined, e: PlannedEvent): Promise<void> {
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // Named like client-go's recorder (<object>.<hex time>): unique, and sorts by time.
      metadata: { name: `${regarding.name.slice(0, 200)}.${eventSuffix(this.now())}`, namespace: regarding.namespace },
      eventTime: microTime(this.now()),
      type: e.type,
      reason: e.reason,
      action: e.action,
      note: e.note,
      reportingController: CONTROLLER_NAME,
      reportingInstance: this.instance.slice(0, 128),
      regarding,
      ...(related ? { related } : {}),
    };
    try {
      await this.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(regarding.namespace)}/events`, { body });
    } catch (err) {
      this.log.warn({ err, reason: e.reason, regarding: `${regarding.kind}/${regarding.name}` }, 'event not recorded');
    }
  }
}

/** The reference to a guard used in Events. */
export function guardRef(namespace: string, name: string, uid?: string): ObjectRef {
  return { apiVersion: API_VERSION, kind: 'RolloutGuard', name, namespace, ...(uid ? { uid } : {}) };
}

/** The reference to a DaemonSet used in Events. */
export function daemonSetRef(namespace: string, name: string, uid?: string): ObjectRef {
  return { apiVersion: 'apps/v1', kind: 'DaemonSet', name, namespace, ...(uid ? { uid } : {}) };
}
