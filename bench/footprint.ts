/**
 * What the operator's caches weigh: the same informers the operator caches (src/runtime/caches.ts:
 * guards, DaemonSets, labelled pods, ControllerRevisions in the watched namespace, nodes cluster-wide,
 * with the same slim functions), started in this process where the garbage collector can be forced, so
 * the heap measured is live objects and not garbage. Index and map-entry overhead (tens of bytes per
 * object) is not included.
 *
 * The operator process's own RSS and heap are reported too, but they are dominated by the runtime
 * (~100 MiB RSS for Node, pino, prom-client and the client) and by when V8 last collected, so a few
 * thousand slim objects do not show there; this measurement does.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { pino } from 'pino';
import type { ApiClient } from '../src/k8s/apiClient.js';
import { Informer } from '../src/k8s/informer.js';
import { HASH_LABEL } from '../src/api/names.js';
import { slimDaemonSet, slimEvent, slimGuard, slimNode, slimPod, slimRevision } from '../src/k8s/slim.js';
import { POD_WARNINGS } from '../src/runtime/caches.js';
import { KINDS } from '../src/api/kinds.js';

let gcFn: (() => void) | undefined;

/** Live heap after full collections (the bench runs without --expose-gc, so the flag is set at runtime). */
function liveHeap(): number {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  for (let i = 0; i < 3; i++) gcFn();
  return process.memoryUsage().heapUsed;
}

export interface Footprint {
  /** Per cached resource: objects, live heap of those objects, and bytes per object. */
  objects: Record<string, { count: number; bytes: number; perObject: number }>;
  /** Sum over the resources. */
  bytes: number;
  /** Bytes per daemon pod if the full Pod objects were cached instead (what slimming saves). */
  fullPodBytes?: number;
}

/**
 * Live heap of `items`, measured by holding a structured clone of them between two full collections.
 * Cloning (rather than measuring the informer before and after it started) leaves out the fixed costs
 * of sockets, buffers and compiled code, which would swamp a few hundred kilobytes of cache.
 */
function weigh(items: readonly unknown[]): number {
  if (items.length === 0) return 0;
  // Enough copies that collector noise (a few kB) is small against the total.
  const copies = Math.ceil(5000 / items.length);
  const before = liveHeap();
  const held: unknown[][] = [];
  for (let c = 0; c < copies; c++) held.push(items.map((o) => structuredClone(o)));
  const after = liveHeap();
  if (held.length !== copies) throw new Error('unreachable: keeps `held` alive across the measurement');
  return Math.max(0, after - before) / copies;
}

/** Lists and watches like the operator on `ns`, weighs what the caches hold, stops again. */
export async function cacheFootprint(client: ApiClient, ns: string): Promise<Footprint> {
  const log = pino({ level: 'silent' });
  const common = { watchTimeoutSeconds: 300 };
  const path = (prefix: string, resource: string) => `${prefix}/namespaces/${ns}/${resource}`;
  const informers = {
    rolloutguards: new Informer(
      client,
      { name: 'rolloutguards', listPath: path('/apis/rolloutguard.dev/v1alpha1', 'rolloutguards'), slim: slimGuard, ...common },
      log,
    ),
    daemonsets: new Informer(
      client,
      { name: 'daemonsets', listPath: path('/apis/apps/v1', 'daemonsets'), slim: slimDaemonSet, ...common },
      log,
    ),
    pods: new Informer(
      client,
      { name: 'pods', listPath: path('/api/v1', 'pods'), labelSelector: HASH_LABEL, slim: slimPod, ...common },
      log,
    ),
    controllerrevisions: new Informer(
      client,
      { name: 'controllerrevisions', listPath: path('/apis/apps/v1', 'controllerrevisions'), slim: slimRevision, ...common },
      log,
    ),
    nodes: new Informer(client, { name: 'nodes', listPath: '/api/v1/nodes', slim: slimNode, ...common }, log),
  };
  const all = Object.values(informers);
  try {
    for (const i of all) i.start();
    await Promise.all(all.map((i) => i.waitForSync()));
    const objects = weighAll(informers);
    const fp: Footprint = { objects, bytes: Object.values(objects).reduce((a, o) => a + o.bytes, 0) };
    if (objects.pods && objects.pods.count > 0) {
      const raw = await client.request<{ items: unknown[] }>('GET', path('/api/v1', 'pods'), { query: { labelSelector: HASH_LABEL } });
      fp.fullPodBytes = Math.round(weigh(raw.items) / Math.max(1, raw.items.length));
    }
    return fp;
  } finally {
    await Promise.allSettled(all.map((i) => i.stop()));
  }
}

/** Count, bytes and bytes per object of each synced informer's cache. */
function weighAll(informers: Record<string, { list(): readonly unknown[] }>): Footprint['objects'] {
  const objects: Footprint['objects'] = {};
  for (const [name, inf] of Object.entries(informers)) {
    const items = [...inf.list()];
    const bytes = weigh(items);
    objects[name] = { count: items.length, bytes: Math.round(bytes), perObject: items.length ? Math.round(bytes / items.length) : 0 };
  }
  return objects;
}

/**
 * What watching Warning Events costs: the operator's two Event informers (`events-daemonsets`,
 * `events-pods`: the same field selectors and slim function as src/runtime/caches.ts) listed on
 * `ns` and weighed as above, beside how many Events the namespace holds in all (what the server-side
 * field selectors leave out).
 */
export async function eventFootprint(
  client: ApiClient,
  ns: string,
): Promise<{ objects: Footprint['objects']; bytes: number; allEvents: number }> {
  const log = pino({ level: 'silent' });
  const listPath = `/api/v1/namespaces/${ns}/events`;
  const informers = {
    'events-daemonsets': new Informer(
      client,
      { name: 'events-daemonsets', listPath, fieldSelector: KINDS.DaemonSet.controllerWarnings, slim: slimEvent, watchTimeoutSeconds: 300 },
      log,
    ),
    'events-pods': new Informer(
      client,
      { name: 'events-pods', listPath, fieldSelector: POD_WARNINGS, slim: slimEvent, watchTimeoutSeconds: 300 },
      log,
    ),
  };
  const all = Object.values(informers);
  try {
    for (const i of all) i.start();
    await Promise.all(all.map((i) => i.waitForSync()));
    const objects = weighAll(informers);
    const raw = await client.request<{ items: unknown[] }>('GET', listPath);
    return { objects, bytes: Object.values(objects).reduce((a, o) => a + o.bytes, 0), allEvents: raw.items.length };
  } finally {
    await Promise.allSettled(all.map((i) => i.stop()));
  }
}
