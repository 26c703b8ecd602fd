/**
 * A StatefulSet ordinal blocked by its PersistentVolumeClaim: the claim is being deleted (the new pod
 * waits for a claim that is going away, kubernetes#89910), lost (its volume is gone), missing, or
 * Pending while the scheduler waits for a volume to bind. None of these is the revision's fault: an
 * update cannot change a StatefulSet's volumeClaimTemplates, so a pod of the previous revision would
 * wait for the same claim, and an undo cannot help.
 */
import type { CauseClass, FaultOwner } from '../api/types.js';
import type { ClaimView, NodeView, PodView } from './observation.js';

export interface ClaimFault {
  owner: FaultOwner;
  cause: CauseClass;
  reason: string;
  message: string;
  comparison: string;
}

const COMPARISON =
  "claims are not part of a revision (an update cannot change a StatefulSet's volumeClaimTemplates): a pod of the previous revision would wait for the same claim, so an undo cannot help";

/** The scheduler's words for a pod whose claim has no volume yet (immediate binding, or none to bind). */
const WAITS_FOR_VOLUME =
  /unbound immediate PersistentVolumeClaims|didn't find available persistent volumes to bind|persistentvolumeclaim "[^"]+" not found|is being deleted/i;

function describe(c: ClaimView, pod: string): string {
  if (c.deletingSince)
    return `claim ${c.name} is being deleted (since ${c.deletingSince}): pod ${pod} waits for a claim that is going away; once no pod uses it, it is removed, and deleting pod ${pod} then has the StatefulSet controller create claim and pod again`;
  if (c.phase === 'Lost')
    return `claim ${c.name} is Lost: the PersistentVolume it was bound to is gone; restore the volume, or delete the claim and pod ${pod} to start the ordinal on a new volume`;
  if (c.phase === 'Missing')
    return `claim ${c.name} does not exist: pod ${pod} cannot be scheduled until the StatefulSet controller creates it again`;
  const sc = c.storageClass ? ` of StorageClass ${c.storageClass}` : '';
  return `claim ${c.name}${sc} is Pending: no volume is bound to it (kubectl describe pvc ${c.name} says why: provisioning failed, or no PersistentVolume matches)`;
}

/**
 * Why `unit`'s pod `pod` (absent: the unit has none) is blocked by a claim, or undefined when its claims
 * do not explain it. `message` is the scheduler's word on an unscheduled pod. A Pending claim explains
 * only an unscheduled pod the scheduler says waits for a volume: with WaitForFirstConsumer every claim
 * of a pod not yet placed is Pending, whatever stops the pod.
 */
export function claimFault(
  unit: Pick<NodeView, 'node' | 'claims'> | undefined,
  pod: PodView | undefined,
  message: string,
): ClaimFault | undefined {
  const claims = unit?.claims ?? [];
  if (claims.length === 0 || pod?.scheduled) return undefined;
  const decisive = (c: ClaimView): boolean =>
    c.deletingSince !== undefined || c.phase === 'Lost' || (pod !== undefined && c.phase === 'Missing');
  const found = claims.find(decisive) ?? (pod && WAITS_FOR_VOLUME.test(message) ? claims.find((c) => c.phase === 'Pending') : undefined);
  if (!found) return undefined;
  return {
    owner: 'Configuration',
    cause: 'VolumeClaimUnavailable',
    reason: found.deletingSince ? 'ClaimDeleting' : `Claim${found.phase}`,
    message: describe(found, unit?.node ?? ''),
    comparison: COMPARISON,
  };
}
