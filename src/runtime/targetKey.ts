/**
 * How the runtime's indexes and pod watches key a guard's target. A DaemonSet's key is `namespace/name`,
 * as it was before other kinds (logs, metrics and tests read it); another kind's is prefixed with it.
 */
import type { TargetKind } from '../api/types.js';

export function targetKey(kind: TargetKind, namespace: string | undefined, name: string): string {
  return kind === 'DaemonSet' ? `${namespace ?? ''}/${name}` : `${kind}:${namespace ?? ''}/${name}`;
}
