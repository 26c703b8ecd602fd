/**
 * How the runtime's indexes and pod watches key a guard's target. The original kind's (a DaemonSet's) key
 * is `namespace/name`, as it was before other kinds (logs, metrics and tests read it); another kind's is
 * prefixed with it.
 */
import { KINDS } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';

export function targetKey(kind: TargetKind, namespace: string | undefined, name: string): string {
  return KINDS[kind].original ? `${namespace ?? ''}/${name}` : `${kind}:${namespace ?? ''}/${name}`;
}
