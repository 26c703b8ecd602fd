/**
 * The slim Deployment and ReplicaSet the informers cache (see slim.ts). A Deployment's history is its
 * ReplicaSets, one per pod template: a ReplicaSet is cached as the revision it stands for (its
 * pod-template-hash, its `deployment.kubernetes.io/revision`, a digest of its template) with the counts of
 * the pods it owns and its ReplicaFailure condition, never with its template.
 */
import {
  DEPLOYMENT_REVISION_ANNOTATION,
  IGNORE_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  UNDO_OPT_OUT_ANNOTATION,
  UNDO_RECORD_ANNOTATION,
} from '../api/names.js';
import type { SlimDeployment, SlimReplicaSet } from '../api/objects.js';
import { slimLabelSelector } from './labelSelector.js';
import { meta, templateDigest, templateFacets, volumeDigests } from './slim.js';

// The raw objects come straight from JSON; they are typed loosely on purpose and read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call */

/** The API server's default progressDeadlineSeconds for a Deployment (apps/v1). */
export const DEFAULT_DEPLOYMENT_DEADLINE_SECONDS = 600;

/** A count from a status, 0 when absent. */
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The condition `type` of a status, if it has one. */
const conditionOf = (raw: any, type: string): any =>
  (Array.isArray(raw?.status?.conditions) ? raw.status.conditions : []).find((c: any) => c?.type === type);

export function slimDeployment(raw: any): SlimDeployment {
  const spec = raw?.spec ?? {};
  const s = raw?.status ?? {};
  const rolling = spec.strategy?.rollingUpdate;
  const out: SlimDeployment = {
    metadata: meta(raw?.metadata, {
      labels: true,
      owners: true,
      annotations: [UNDO_OPT_OUT_ANNOTATION, IGNORE_ANNOTATION, UNDO_RECORD_ANNOTATION, DEPLOYMENT_REVISION_ANNOTATION],
    }),
    spec: {
      // The API server defaults replicas to 1; a Deployment read before defaulting says the same.
      replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
      selector: slimLabelSelector(spec.selector),
      strategy: {
        type: spec.strategy?.type === 'Recreate' ? 'Recreate' : 'RollingUpdate',
        ...(rolling && spec.strategy?.type !== 'Recreate'
          ? {
              rollingUpdate: {
                ...(rolling.maxSurge !== undefined ? { maxSurge: rolling.maxSurge } : {}),
                ...(rolling.maxUnavailable !== undefined ? { maxUnavailable: rolling.maxUnavailable } : {}),
              },
            }
          : {}),
      },
      minReadySeconds: count(spec.minReadySeconds),
      progressDeadlineSeconds:
        typeof spec.progressDeadlineSeconds === 'number' ? spec.progressDeadlineSeconds : DEFAULT_DEPLOYMENT_DEADLINE_SECONDS,
      paused: spec.paused === true,
      images: (spec.template?.spec?.containers ?? []).map((c: any) => String(c?.image ?? '')),
      ...(spec.template ? { templateDigest: templateDigest(spec.template) } : {}),
    },
    status: {
      observedGeneration: count(s.observedGeneration),
      replicas: count(s.replicas),
      updatedReplicas: count(s.updatedReplicas),
      readyReplicas: count(s.readyReplicas),
      availableReplicas: count(s.availableReplicas),
      unavailableReplicas: count(s.unavailableReplicas),
    },
  };
  const progressing = conditionOf(raw, 'Progressing');
  if (progressing) {
    // lastUpdateTime moves on every progress, lastTransitionTime only when the status flips: the latter
    // says since when the deadline is exceeded, and keeps the slim copy still while nothing changes.
    out.status.progressing = {
      status: String(progressing.status ?? 'Unknown'),
      reason: String(progressing.reason ?? ''),
      message: String(progressing.message ?? ''),
      ...(progressing.lastTransitionTime ? { since: String(progressing.lastTransitionTime) } : {}),
    };
  }
  return out;
}

/**
 * A ReplicaSet's pod template as its Deployment holds it: the ReplicaSet controller's copy carries the
 * `pod-template-hash` label the Deployment's does not (kubernetes/kubernetes
 * pkg/controller/deployment/util/deployment_util.go, EqualIgnoreHash, compares them the same way).
 */
export function templateWithoutHash(template: any): unknown {
  const labels = template?.metadata?.labels;
  if (!labels || labels[POD_TEMPLATE_HASH_LABEL] === undefined) return template;
  const rest: Record<string, unknown> = { ...labels };
  delete rest[POD_TEMPLATE_HASH_LABEL];
  return { ...template, metadata: { ...template.metadata, labels: rest } };
}

export function slimReplicaSet(raw: any): SlimReplicaSet {
  const m = raw?.metadata ?? {};
  const name = String(m.name ?? '');
  const s = raw?.status ?? {};
  const revision = Number(m.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? 0);
  const out: SlimReplicaSet = {
    metadata: meta(m, { owners: true }),
    hash: String(m.labels?.[POD_TEMPLATE_HASH_LABEL] ?? name.slice(name.lastIndexOf('-') + 1)),
    revision: Number.isFinite(revision) ? revision : 0,
    replicas: typeof raw?.spec?.replicas === 'number' ? raw.spec.replicas : 1,
    current: count(s.replicas),
    ready: count(s.readyReplicas),
    available: count(s.availableReplicas),
  };
  const template = raw?.spec?.template;
  if (template) {
    const own = templateWithoutHash(template);
    out.templateDigest = templateDigest(own);
    out.facets = templateFacets(own);
    out.volumes = volumeDigests(template);
  }
  const failure = conditionOf(raw, 'ReplicaFailure');
  if (failure?.status === 'True') {
    out.replicaFailure = {
      reason: String(failure.reason ?? 'FailedCreate'),
      message: String(failure.message ?? ''),
      ...(failure.lastTransitionTime ? { since: String(failure.lastTransitionTime) } : {}),
    };
  }
  return out;
}
