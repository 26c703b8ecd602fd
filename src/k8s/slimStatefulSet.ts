/**
 * The slim StatefulSet the informers cache (see slim.ts): its replicas, update strategy, template digest,
 * claim templates and the controller's counters and revisions; and the slim claims of its ordinals.
 */
import { IGNORE_ANNOTATION, UNDO_OPT_OUT_ANNOTATION, UNDO_RECORD_ANNOTATION } from '../api/names.js';
import type { SlimClaim, SlimStatefulSet } from '../api/objects.js';
import { slimLabelSelector } from './labelSelector.js';
import { meta, templateDigest } from './slim.js';

// The raw object comes straight from JSON; it is typed loosely on purpose and read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call */

export function slimStatefulSet(raw: any): SlimStatefulSet {
  const spec = raw?.spec ?? {};
  const s = raw?.status ?? {};
  const rolling = spec.updateStrategy?.rollingUpdate;
  return {
    metadata: meta(raw?.metadata, {
      labels: true,
      owners: true,
      annotations: [UNDO_OPT_OUT_ANNOTATION, IGNORE_ANNOTATION, UNDO_RECORD_ANNOTATION],
    }),
    spec: {
      // The API server defaults replicas to 1; a StatefulSet read before defaulting says the same.
      replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
      selector: slimLabelSelector(spec.selector),
      podManagementPolicy: spec.podManagementPolicy === 'Parallel' ? 'Parallel' : 'OrderedReady',
      updateStrategy: {
        type: spec.updateStrategy?.type ?? 'RollingUpdate',
        ...(rolling
          ? {
              rollingUpdate: {
                ...(typeof rolling.partition === 'number' ? { partition: rolling.partition } : {}),
                ...(rolling.maxUnavailable !== undefined ? { maxUnavailable: rolling.maxUnavailable } : {}),
              },
            }
          : {}),
      },
      minReadySeconds: spec.minReadySeconds ?? 0,
      images: (spec.template?.spec?.containers ?? []).map((c: any) => String(c?.image ?? '')),
      ...(spec.template ? { templateDigest: templateDigest(spec.template) } : {}),
      claimTemplates: (Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [])
        .map((t: any) => String(t?.metadata?.name ?? ''))
        .filter((n: string) => n !== ''),
    },
    status: {
      observedGeneration: s.observedGeneration ?? 0,
      replicas: s.replicas ?? 0,
      readyReplicas: s.readyReplicas ?? 0,
      currentReplicas: s.currentReplicas ?? 0,
      updatedReplicas: s.updatedReplicas ?? 0,
      availableReplicas: s.availableReplicas ?? 0,
      ...(s.currentRevision ? { currentRevision: String(s.currentRevision) } : {}),
      ...(s.updateRevision ? { updateRevision: String(s.updateRevision) } : {}),
    },
  };
}

/** A claim: its phase and deletion, which is all that tells whether it can serve its pod. */
export function slimClaim(raw: any): SlimClaim {
  const out: SlimClaim = { metadata: meta(raw?.metadata), phase: String(raw?.status?.phase ?? 'Pending') };
  if (typeof raw?.spec?.storageClassName === 'string') out.storageClassName = raw.spec.storageClassName;
  return out;
}
