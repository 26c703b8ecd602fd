/**
 * Guards with a selector share the guards' queue and informer with every other guard: a key is
 * dispatched to the selector reconciler when its cached guard has a selector, to the guard reconciler
 * otherwise (including a guard that is gone, so its metrics are forgotten).
 */
import type { Logger } from 'pino';
import { isSelectorGuard } from '../api/objects.js';
import type { Reconciler, ReconcileResult } from '../reconcile/reconciler.js';
import { SelectorReconciler, type SelectorCache, type SelectorPorts } from '../reconcile/selectorReconciler.js';
import type { Clock } from '../reconcile/ports.js';
import type { Caches } from './caches.js';

/** What a selector guard's pass reads. */
function selectorCache(caches: Caches): SelectorCache {
  const { policies, namespaces } = caches;
  return {
    guard: (n, name) => caches.guards.get(n, name),
    guards: () => caches.guards.list(),
    workloads: (kind) => caches.listedWorkloads(kind),
    ...(policies && namespaces ? { policies: () => policies.list(), namespaces: () => namespaces.list() } : {}),
  };
}

/** The guards' queue's reconcile function. */
export function guardDispatch(
  caches: Caches,
  reconciler: Pick<Reconciler, 'reconcile'>,
  deps: { ports: SelectorPorts; clock: Clock; log: Logger },
): (key: string, waitedMs: number) => Promise<ReconcileResult> {
  const selector = new SelectorReconciler(selectorCache(caches), deps.ports, deps.clock, deps.log);
  return async (key, waitedMs) => {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cached = caches.guards.get(namespace, name);
    if (!cached || !isSelectorGuard(cached)) return reconciler.reconcile(key, waitedMs);
    await selector.reconcile(namespace, name);
    return {};
  };
}
