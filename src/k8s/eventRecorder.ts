/**
 * Emits events.k8s.io/v1 Events on the guard and, mirrored, on its DaemonSet so that
 * `kubectl describe ds` tells the same story. decide() plans Events only on transitions, and the
 * reconciler keeps them in status until they are announced (reconcile/announcements.ts): each Event's
 * name derives from its announcement id, so sending one twice is refused as AlreadyExists and counts as
 * announced. A failure is logged and reported back, never thrown: Events complement status, they do not
 * replace it, and the reconciler announces what is left on a later pass.
 *
 * One refusal is final: a namespace being terminated takes no new content, so an Event refused for that
 * reason counts as settled (not offered again), and the namespace is remembered as terminating from that
 * moment (see {@link EventRecorder.terminatingSince}).
 */
import type { Logger } from 'pino';
import type { Announcement } from '../api/types.js';
import { type ApiClient } from './apiClient.js';
import { isAlreadyExists, isNamespaceTerminating } from './apiErrors.js';
import { CONTROLLER_NAME, EVENTS_API_VERSION } from '../api/names.js';
import { kindDescriptor } from '../api/kinds.js';
import type { ObjectRef } from '../api/objects.js';
import { microTime } from '../api/time.js';
import { eventsPath } from './apiPaths.js';

/**
 * The Event's name: the regarding object's name and the announcement id. The copy on the target (a
 * DaemonSet, `.ds`; a StatefulSet, `.sts`: KindDescriptor.eventSuffix) also names the guard it comes from: a guard and its target
 * often share a name and a namespace, and two guards of one target (a Conflict) may announce in the same
 * millisecond with the same id.
 */
export function eventName(regarding: ObjectRef, id: string, related?: ObjectRef): string {
  const suffix = kindDescriptor(regarding.kind)?.eventSuffix;
  if (suffix && related) return `${regarding.name.slice(0, 100)}.${related.name.slice(0, 100)}.${id}.${suffix}`;
  return `${regarding.name.slice(0, 200)}.${id}`;
}

export class EventRecorder {
  /** Namespaces the API server refused an Event in because they are being terminated, with when it first did. */
  private readonly terminating = new Map<string, string>();

  constructor(
    private readonly client: ApiClient,
    private readonly instance: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * When the API server first refused an Event in `namespace` because the namespace is being terminated,
   * if it has. Gather reads it where no namespace cache says so; it compares it with the DaemonSet's
   * creation, so a namespace of the same name made anew is not taken for the old one.
   */
  terminatingSince(namespace: string): string | undefined {
    return this.terminating.get(namespace);
  }

  /**
   * Emits each announcement on the guard, and on the DaemonSet when `onTarget` and the target exists.
   * Returns the ids now known to exist as Events (created here, or earlier by this or another replica).
   */
  async emit(guard: ObjectRef, target: ObjectRef | undefined, events: readonly Announcement[]): Promise<string[]> {
    const announced: string[] = [];
    for (const e of events) {
      let ok = await this.create(guard, target, e);
      if (e.onTarget && target) ok = (await this.create(target, guard, e)) && ok;
      if (ok) announced.push(e.id);
    }
    return announced;
  }

  private async create(regarding: ObjectRef, related: ObjectRef | undefined, e: Announcement): Promise<boolean> {
    const body = {
      apiVersion: EVENTS_API_VERSION,
      kind: 'Event',
      metadata: { name: eventName(regarding, e.id, related), namespace: regarding.namespace },
      eventTime: microTime(Date.parse(e.at)),
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
      await this.client.request('POST', eventsPath(regarding.namespace), { body });
      this.terminating.delete(regarding.namespace); // it takes content: a namespace of that name made anew
      return true;
    } catch (err) {
      if (isAlreadyExists(err)) return true;
      if (isNamespaceTerminating(err)) {
        if (!this.terminating.has(regarding.namespace)) {
          this.terminating.set(regarding.namespace, new Date(this.now()).toISOString());
          this.log.info({ namespace: regarding.namespace, reason: e.reason }, 'event not recorded: its namespace is being terminated');
        }
        return true;
      }
      this.log.warn(
        { err, reason: e.reason, regarding: `${regarding.kind}/${regarding.name}` },
        'event not recorded yet: it stays in status and is announced on a later pass',
      );
      return false;
    }
  }
}
