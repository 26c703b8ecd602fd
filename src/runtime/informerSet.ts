/**
 * One logical informer over several namespaces: the operator may be told to watch a list of namespaces,
 * and the API server has no "these namespaces" selector, so each gets its own list and watch; callers see
 * one cache. With no namespaces given, one informer watches all of them.
 */
import type { Logger } from 'pino';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer } from '../k8s/informer.js';
import type { InformerEvent } from '../k8s/informerStore.js';

/** What every cached object has: enough to key it by namespace and name. */
export type Meta = { metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string } };

/** One logical informer over several namespaces (one real informer each), or over all of them. */
export class InformerSet<T extends Meta> {
  readonly members: Informer<T>[];
  /** The namespace each member watches, in member order; `''` for all namespaces. */
  readonly scopes: string[];
  private readonly byNs = new Map<string, Informer<T>>();

  constructor(
    client: ApiClient,
    log: Logger,
    namespaces: readonly string[],
    make: (ns: string | undefined) => {
      name: string;
      listPath: string;
      labelSelector?: string;
      fieldSelector?: string;
      slim: (raw: unknown) => T;
    },
    common: { watchTimeoutSeconds: number; idleTimeoutMs: number; backoff: { initialMs: number; maxMs: number } },
  ) {
    const scopes: (string | undefined)[] = namespaces.length > 0 ? [...namespaces] : [undefined];
    this.scopes = scopes.map((ns) => ns ?? '');
    this.members = scopes.map((ns) => {
      const inf = new Informer<T>(client, { ...make(ns), ...common }, log);
      if (ns) this.byNs.set(ns, inf);
      return inf;
    });
  }

  get(namespace: string, name: string): Readonly<T> | undefined {
    const inf = this.byNs.get(namespace) ?? (this.byNs.size === 0 ? this.members[0] : undefined);
    return inf?.get(namespace, name);
  }

  byIndex(index: string, value: string): ReadonlyArray<Readonly<T>> {
    if (this.members.length === 1) return this.members[0]?.byIndex(index, value) ?? [];
    return this.members.flatMap((m) => m.byIndex(index, value));
  }

  list(): ReadonlyArray<Readonly<T>> {
    return this.members.flatMap((m) => m.list());
  }

  addIndex(name: string, fn: (obj: T) => string[]): void {
    for (const m of this.members) m.addIndex(name, fn);
  }

  onEvent(fn: (ev: InformerEvent<T>) => void): void {
    for (const m of this.members) m.onEvent(fn);
  }

  onRelist(fn: () => void): void {
    for (const m of this.members) m.onRelist(fn);
  }

  synced(): boolean {
    return this.members.every((m) => m.hasSynced());
  }

  /** Asks the member that watches `namespace` to list again (see {@link Informer.requestRelist}). */
  requestRelist(namespace: string, reason: string): boolean {
    const inf = this.byNs.get(namespace) ?? (this.byNs.size === 0 ? this.members[0] : undefined);
    return inf?.requestRelist(reason) ?? false;
  }
}
