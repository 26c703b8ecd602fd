/**
 * Namespaces (and node names) for tests that share one cluster: unique names, and namespaces created
 * ready for pods.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Kubectl } from './kubectl.js';
import { waitFor } from './wait.js';

/** A name that is unique across parallel test processes, valid as a namespace or node name prefix. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase().slice(0, 50);
}

/**
 * Creates namespace `name` and waits for its `default` ServiceAccount. ServiceAccount admission refuses
 * every pod until the serviceaccount controller has made it, a moment after the namespace; a DaemonSet
 * applied in that moment would start with FailedCreate Warnings no test means.
 */
export async function createNamespace(kubectl: Kubectl, name: string, labels: Record<string, string> = {}): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }) });
  // Long: a controller manager whose watches are in back-off after an API server restart takes tens of seconds.
  await waitFor(
    async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', name, '-o', 'name'], { allowFail: true })).code === 0,
    {
      timeoutMs: 120_000,
      intervalMs: 250,
      describe: `the default ServiceAccount of namespace ${name}`,
    },
  );
}
