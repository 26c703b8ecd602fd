/**
 * The cache of one informer: the objects of a resource collection by `namespace/name`, their indexes, and the
 * changes a complete list or a watch event makes to them (client-go's `tools/cache` store and indexer).
 *
 * Invariant: cached objects are shared by every reader and are deep-frozen (`Object.freeze`) when they enter the
 * cache; writing to one throws in strict-mode code. Never mutate them: `structuredClone` first.
 */

/** Metadata every cached kind must keep (even after slimming). */
export interface ObjectMeta {
  /** Object name. */
  name: string;
  /** Namespace; absent for cluster-scoped kinds. */
  namespace?: string;
  /** Opaque version used for change detection and watch resumption. */
  resourceVersion?: string;
  /** Unique id across re-creations with the same name. */
  uid?: string;
}

/**
 * A cache change. `old` is the previous cached state for `update`. Objects are frozen: never mutate.
 * `writtenAt`, on an add or update a watch delivered to an informer that reports deliveries, is when
 * the API server last wrote the object (k8s/writtenAt.ts; whole seconds), where it says.
 */
export type InformerEvent<T> = { type: 'add' | 'update' | 'delete'; obj: Readonly<T>; old?: Readonly<T>; writtenAt?: number };

/** One cached object. */
export interface Entry<T> {
  obj: T;
  /** Kept separately because `slim` may drop `metadata.resourceVersion`, and the relist diff needs it. */
  rv: string | undefined;
}

/** A raw object made ready for the cache, under its key. */
export interface Keyed<T> {
  key: string;
  entry: Entry<T>;
}

interface Index<T> {
  fn: (obj: T) => string[];
  byValue: Map<string, Set<string>>;
}

/** Objects by key, with indexes maintained on every change. */
export class InformerStore<T extends { metadata: ObjectMeta }> {
  private cache = new Map<string, Entry<T>>();
  private readonly indexes = new Map<string, Index<T>>();

  /**
   * @param name the informer's name, for error messages.
   * @param slim keeps only the fields the cache needs; must be pure and deterministic.
   */
  constructor(
    private readonly name: string,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- input is raw JSON from the API server
    private readonly slim: ((raw: any) => T) | undefined,
  ) {}

  /** Adds an index; `fn` returns the index values of an object. Throws for a name already taken. */
  addIndex(name: string, fn: (obj: T) => string[]): void {
    if (this.indexes.has(name)) throw new Error(`informer ${this.name}: index ${name} already exists`);
    this.indexes.set(name, { fn, byValue: new Map() });
  }

  /** Objects cached. */
  get size(): number {
    return this.cache.size;
  }

  /** Cached object by key. The result is shared and frozen: never mutate it. */
  get(namespace: string | undefined, name: string): Readonly<T> | undefined {
    return this.cache.get(cacheKey(namespace, name))?.obj;
  }

  /** All cached objects, or those of one namespace. Shared and frozen: never mutate them. */
  list(namespace?: string): ReadonlyArray<Readonly<T>> {
    const out: T[] = [];
    for (const { obj } of this.cache.values()) {
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push(obj);
    }
    return out;
  }

  /** Cached objects whose index `indexName` contains `value`. Throws for an unknown index (a wiring bug). */
  byIndex(indexName: string, value: string): ReadonlyArray<Readonly<T>> {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`informer ${this.name}: no index ${indexName}`);
    const out: T[] = [];
    for (const key of index.byValue.get(value) ?? []) {
      const entry = this.cache.get(key);
      if (entry) out.push(entry.obj);
    }
    return out;
  }

  /** Key and version come from the raw object, so a `slim` that drops them cannot corrupt the cache. */
  prepare(raw: unknown): Keyed<T> {
    const meta = (raw as { metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: unknown } } | null)?.metadata;
    if (!meta || typeof meta.name !== 'string') throw new Error(`informer ${this.name}: object without metadata.name`);
    const key = cacheKey(typeof meta.namespace === 'string' ? meta.namespace : undefined, meta.name);
    const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : undefined;
    const obj = deepFreeze(this.slim ? this.slim(raw) : (raw as T));
    return { key, entry: { obj, rv } };
  }

  /**
   * Swaps in a complete list and returns the diff against the previous cache, so that changes — deletes in
   * particular — that happened while nobody was watching still reach the handlers.
   */
  replace(items: Map<string, Entry<T>>): Array<InformerEvent<T>> {
    const previous = this.cache;
    this.cache = items;
    for (const index of this.indexes.values()) index.byValue.clear();
    for (const [key, entry] of items) this.indexAdd(key, entry.obj);
    const diff: Array<InformerEvent<T>> = [];
    for (const [key, old] of previous) {
      if (!items.has(key)) diff.push({ type: 'delete', obj: old.obj });
    }
    for (const [key, entry] of items) {
      const old = previous.get(key);
      if (!old) diff.push({ type: 'add', obj: entry.obj });
      // Unchanged resourceVersion means unchanged object: no event, as client-node's informer does.
      else if (old.rv !== entry.rv || entry.rv === undefined) diff.push({ type: 'update', obj: entry.obj, old: old.obj });
    }
    return diff;
  }

  /** Applies one watched change and returns it as a cache change, with the object's resourceVersion. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: unknown): { event: InformerEvent<T>; rv: string | undefined } {
    const { key, entry } = this.prepare(raw);
    const old = this.cache.get(key);
    if (old) this.indexRemove(key, old.obj);
    if (type === 'DELETED') {
      this.cache.delete(key);
    } else {
      this.cache.set(key, entry);
      this.indexAdd(key, entry.obj);
    }
    const event: InformerEvent<T> =
      type === 'DELETED'
        ? { type: 'delete', obj: entry.obj }
        : old
          ? { type: 'update', obj: entry.obj, old: old.obj }
          : { type: 'add', obj: entry.obj };
    return { event, rv: entry.rv };
  }

  private indexAdd(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.fn(obj)) {
        let keys = index.byValue.get(value);
        if (!keys) index.byValue.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private indexRemove(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.fn(obj)) {
        const keys = index.byValue.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.byValue.delete(value);
      }
    }
  }
}

/** `namespace/name`, or `name` for cluster-scoped objects — the same key the work queue uses. */
function cacheKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function deepFreeze<O>(obj: O): O {
  if (obj !== null && typeof obj === 'object' && !Object.isFrozen(obj)) {
    Object.freeze(obj);
    for (const v of Object.values(obj)) deepFreeze(v);
  }
  return obj;
}
