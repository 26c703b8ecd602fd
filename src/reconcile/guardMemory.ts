/**
 * Everything one guard remembers between passes, in one object per guard key, so that a guard is
 * created and forgotten in one place: {@link GuardMemories.drop} is the whole of forgetting a deleted
 * guard (beside its metrics, which the observer keeps).
 *
 * Each piece is a cache of what earlier passes saw; none is needed for correctness after a restart or
 * on a new leader, which start with empty memories and rebuild them from the caches and status:
 * - the target memory (gather.ts): the nodes that were targets on the last recorded pass;
 * - the cache wait (cacheWait.ts): how long decide has been setting passes aside;
 * - the progress hold: when status was last written;
 * - the announcements (announcements.ts): which Events this process has announced, and the last id;
 * - the own write: our latest status write until the cache shows it;
 * - the schema refusal: what the installed CRD last refused of this guard's status, so that it is logged
 *   once, not on every pass (schemaOutdated.ts);
 * - the blocked units: every unit the last recorded pass found blocked, where status names at most 20,
 *   so that a rollout starting next knows every node already failing (decide/track.ts).
 */
import type { SlimGuard } from '../api/objects.js';
import type { BlockedNode } from '../api/types.js';
import { Announcements } from './announcements.js';
import { CacheWait } from './cacheWait.js';
import { TargetMemory } from './targetMemory.js';

/**
 * A guard as our own status write returned it, kept until the informer has caught up with it.
 * `superseded` holds the resourceVersions it replaced (the one each of our writes patched over): while
 * the cache still shows one of those, the cache is older than this copy. Any other cached version (our
 * write arrived, or someone else wrote since) ends the memo. No resourceVersion is ever compared for
 * order, only for identity.
 */
interface OwnWrite {
  guard: SlimGuard;
  superseded: Set<string>;
}

/**
 * Every unit a recorded pass found blocked, with the capped list its status named, by the fields that
 * tell one entry from another (a round trip through the API server may reorder an entry's keys).
 */
interface BlockedMemo {
  named: string;
  all: readonly BlockedNode[];
}

function namedKey(named: readonly BlockedNode[] | undefined): string {
  return JSON.stringify((named ?? []).map((b) => [b.node, b.pod ?? '', b.hash ?? '', b.reason]));
}

/** Bound on `superseded`: a watch that never delivers our writes must not make the memo grow forever. */
const MAX_SUPERSEDED = 64;

/** What one guard (`namespace/name`) remembers between passes. */
export class GuardMemory {
  /** The guard's namespace, which its DaemonSet shares. */
  readonly namespace: string;
  /** Which nodes were targets on the last recorded pass, to name the ones that leave. */
  readonly targets = new TargetMemory();
  /** How long decide has been setting this guard's passes aside for disagreeing caches. */
  readonly cacheWait = new CacheWait();
  /** Which of this guard's Events this process has announced. */
  readonly announcements = new Announcements();
  /**
   * The API server's message of the last status write an outdated CRD refused (schemaOutdated.ts), while
   * it keeps refusing; undefined once a full status is written again.
   */
  schemaRefusal: string | undefined;
  private lastWrite: number | undefined;
  /**
   * Our latest status write until the cache shows it. Deciding from the cache right after our own
   * write would patch with the version we just replaced and draw a 409, a GET and a second decide.
   */
  private own: OwnWrite | undefined;
  private blocked: BlockedMemo | undefined;

  constructor(readonly key: string) {
    this.namespace = key.slice(0, key.indexOf('/'));
  }

  /** When status was last written (the progress hold counts from it); undefined before the first write. */
  get lastWriteAt(): number | undefined {
    return this.lastWrite;
  }

  /** Status was written at `now`. */
  written(now: number): void {
    this.lastWrite = now;
  }

  /**
   * A pass was recorded whose status named `named` of the blocked units `all` (undefined: it attributed
   * none, and nothing is remembered).
   */
  recordBlocked(named: readonly BlockedNode[] | undefined, all: readonly BlockedNode[] | undefined): void {
    this.blocked = all ? { named: namedKey(named), all } : undefined;
  }

  /**
   * Every unit blocked at the pass that wrote a status naming `named`, if this process recorded that
   * pass; undefined otherwise (a restart, another leader's write, a status changed since).
   */
  blockedBehind(named: readonly BlockedNode[] | undefined): readonly BlockedNode[] | undefined {
    const memo = this.blocked;
    return memo && memo.named === namedKey(named) ? memo.all : undefined;
  }

  /** Our write of `from` returned `written`: serve it until the cache shows a version it did not replace. */
  remember(from: Readonly<SlimGuard>, written: SlimGuard): void {
    const prev = this.own;
    const superseded = prev && prev.guard.metadata.uid === written.metadata.uid ? prev.superseded : new Set<string>();
    if (from.metadata.resourceVersion !== undefined) superseded.add(from.metadata.resourceVersion);
    this.own = superseded.size > MAX_SUPERSEDED ? undefined : { guard: written, superseded };
  }

  /** The cached guard, or our own later write of it when the cache has not caught up yet. */
  freshest(cached: Readonly<SlimGuard>): Readonly<SlimGuard> {
    const own = this.own;
    if (!own) return cached;
    const rv = cached.metadata.resourceVersion;
    if (own.guard.metadata.uid === cached.metadata.uid && rv !== undefined && own.superseded.has(rv)) return own.guard;
    this.own = undefined;
    return cached;
  }
}

/** One {@link GuardMemory} per guard key, made on first use and dropped with the guard. */
export class GuardMemories {
  private readonly byKey = new Map<string, GuardMemory>();

  /** The memory of guard `key` (`namespace/name`), empty on first use. */
  of(key: string): GuardMemory {
    let m = this.byKey.get(key);
    if (!m) {
      m = new GuardMemory(key);
      this.byKey.set(key, m);
    }
    return m;
  }

  /** Forgets all guard `key` remembered: its next pass is a new guard's. */
  drop(key: string): void {
    this.byKey.delete(key);
  }
}
