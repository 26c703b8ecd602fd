/**
 * Every API path the operator requests, built in one place: a resource's group and version are named
 * once (src/api/names.ts; a workload's in its kind's descriptor, src/api/kinds.ts), and every name in a
 * path is URL-encoded the same way.
 */
import {
  APPS_API_VERSION,
  AUTHENTICATION_API_VERSION,
  AUTHORIZATION_API_VERSION,
  COORDINATION_API_VERSION,
  EVENTS_API_VERSION,
  GROUP,
  GUARD_RESOURCE,
  POLICY_RESOURCE,
  VERSION,
} from '../api/names.js';
import { KINDS } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';

/** The prefix of an API group's version: `/api/v1` for the core group (`''`), `/apis/<group>/<version>` otherwise. */
function prefix(groupVersion: string): string {
  return groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`;
}

/**
 * A collection (`namespace` given: of that namespace; undefined: across all namespaces, or a
 * cluster-scoped one), or with `name` one object of it.
 */
export function resourcePath(groupVersion: string, resource: string, namespace?: string, name?: string): string {
  const ns = namespace !== undefined && namespace !== '' ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${prefix(groupVersion)}${ns}/${resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}

/** RolloutGuards of a namespace (undefined: of all), or one of them. */
export function guardsPath(namespace?: string, name?: string): string {
  return resourcePath(`${GROUP}/${VERSION}`, GUARD_RESOURCE, namespace, name);
}

/** RolloutGuardPolicies (cluster-scoped), or one of them. */
export function policiesPath(name?: string): string {
  return resourcePath(`${GROUP}/${VERSION}`, POLICY_RESOURCE, undefined, name);
}

/** Workloads of `kind` in a namespace (undefined: of all), or one of them: its descriptor's group, version and resource. */
export function workloadsPath(kind: TargetKind, namespace?: string, name?: string): string {
  const d = KINDS[kind];
  return resourcePath(d.apiVersion, d.resource, namespace, name);
}

export function daemonSetsPath(namespace?: string, name?: string): string {
  return workloadsPath(KINDS.DaemonSet.kind, namespace, name);
}

export function statefulSetsPath(namespace?: string, name?: string): string {
  return workloadsPath(KINDS.StatefulSet.kind, namespace, name);
}

export function deploymentsPath(namespace?: string, name?: string): string {
  return workloadsPath(KINDS.Deployment.kind, namespace, name);
}

/** ReplicaSets: a Deployment's history, and the controllers of its pods. */
export function replicaSetsPath(namespace?: string, name?: string): string {
  return resourcePath(APPS_API_VERSION, 'replicasets', namespace, name);
}

export function controllerRevisionsPath(namespace?: string, name?: string): string {
  return resourcePath(APPS_API_VERSION, 'controllerrevisions', namespace, name);
}

export function claimsPath(namespace?: string): string {
  return resourcePath('v1', 'persistentvolumeclaims', namespace);
}

export function podsPath(namespace?: string): string {
  return resourcePath('v1', 'pods', namespace);
}

export function nodesPath(): string {
  return resourcePath('v1', 'nodes');
}

export function namespacesPath(): string {
  return resourcePath('v1', 'namespaces');
}

/** core v1 Events of a namespace, or of all (the Warning Events the operator reads). */
export function coreEventsPath(namespace?: string): string {
  return resourcePath('v1', 'events', namespace);
}

/** events.k8s.io/v1 Events of a namespace (the ones the operator writes). */
export function eventsPath(namespace: string): string {
  return resourcePath(EVENTS_API_VERSION, 'events', namespace);
}

export function leasesPath(namespace: string): string {
  return resourcePath(COORDINATION_API_VERSION, 'leases', namespace);
}

export const TOKEN_REVIEWS_PATH = resourcePath(AUTHENTICATION_API_VERSION, 'tokenreviews');
export const SUBJECT_ACCESS_REVIEWS_PATH = resourcePath(AUTHORIZATION_API_VERSION, 'subjectaccessreviews');
