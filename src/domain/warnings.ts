/**
 * Causes the cluster already states in Warning Events, read for blocked and empty nodes:
 *
 * - the DaemonSet controller's `FailedCreate` on the DaemonSet when the API server refuses the new pod:
 *   Pod Security admission or a policy webhook ("is forbidden: violates PodSecurity ...", "admission
 *   webhook ... denied the request") is the new template's fault; a ResourceQuota ("exceeded quota: q,
 *   requested: pods=1, used: pods=3, limited: pods=3") is the revision's when it asks for more of a
 *   resource (its requests), and the namespace's configuration when only the pod count is over (a
 *   `maxSurge` pod the quota has no room for: the old revision would need the same room);
 * - the kubelet's `FailedMount`/`FailedAttachVolume` on the pod: the revision's when it added or changed
 *   that volume, the node's when the same volume mounted before;
 * - the kubelet's `FailedCreatePodSandBox`: the node's runtime or network, never the revision;
 * - the kubelet's `Unhealthy` ("Readiness probe failed: <what the probe printed>"): the only place that
 *   says why a running container is not ready (its status says only that it is not).
 *
 * Only an Event at or after the rollout started explains it: an old refusal says nothing about now.
 */
import { truncate } from './messages.js';
import type { CauseClass, FaultOwner } from '../api/types.js';
import type { WarningView } from './observation.js';

/** A cause read from an Event, with its owner and a message that quotes the Event. */
export interface Explained {
  owner: FaultOwner;
  cause: CauseClass;
  reason: string;
  message: string;
}

const ADMISSION = /is forbidden|admission webhook|denied the request|violates PodSecurity/i;

/**
 * Event times have one-second precision (lastTimestamp), and the rollout's start is our own clock's: an
 * Event up to this much older than the start still belongs to it.
 */
const EVENT_TIME_SLACK_MS = 2_000;
const tooOld = (w: WarningView, since: number | undefined): boolean =>
  since !== undefined && Date.parse(w.at) < since - EVENT_TIME_SLACK_MS;
const QUOTA = /exceeded quota:\s*([^,]+)/i;

/** The resources a quota refusal names as over the limit: "requested: pods=1, ..." → ['pods']. */
function quotaResources(message: string): string[] {
  const m = /requested:\s*([^]*?)(?:,\s*used:|$)/i.exec(message);
  if (!m) return [];
  return (m[1] ?? '')
    .split(',')
    .map((kv) => kv.split('=')[0]?.trim() ?? '')
    .filter((k) => k !== '');
}

/** The quoted refusal: the part after "Error creating: " when present, cut for status. */
function quote(message: string): string {
  const i = message.indexOf('Error creating: ');
  return `"${truncate(i >= 0 ? message.slice(i + 'Error creating: '.length) : message, 300)}"`;
}

/** Explains a node with no pod from the DaemonSet's latest Warning Event, if it is recent enough. */
export function explainNoPod(w: WarningView | undefined, since: number | undefined): Explained | undefined {
  if (!w || w.reason !== 'FailedCreate' || tooOld(w, since)) return undefined;
  const q = QUOTA.exec(w.message);
  if (q) {
    const quota = (q[1] ?? '').trim();
    const resources = quotaResources(w.message);
    const onlyPods = resources.length > 0 && resources.every((r) => r === 'pods' || r === 'count/pods');
    return onlyPods
      ? {
          owner: 'Configuration',
          cause: 'QuotaExceeded',
          reason: 'FailedCreate',
          message: `ResourceQuota ${quota} has no room for another pod (the surge pod of the rollout): the namespace's quota, not the revision, blocks it; raise the quota or set maxSurge 0. Refused: ${quote(w.message)}`,
        }
      : {
          owner: 'Revision',
          cause: 'QuotaExceeded',
          reason: 'FailedCreate',
          message: `the new pod's requests (${resources.join(', ')}) exceed ResourceQuota ${quota}: the revision asks for more than the namespace allows. Refused: ${quote(w.message)}`,
        };
  }
  if (ADMISSION.test(w.message)) {
    return {
      owner: 'Revision',
      cause: 'AdmissionRefused',
      reason: 'FailedCreate',
      message: `admission refuses the new template: ${quote(w.message)}`,
    };
  }
  return undefined;
}

/** The volume a FailedMount message names: `for volume "config"` or `volumes=[config]`. */
export function mountedVolume(message: string): string | undefined {
  return /for volume "([^"]+)"/.exec(message)?.[1] ?? /unattached volumes=\[([^\]\s,]+)/.exec(message)?.[1];
}

/**
 * Explains a pod of the new revision that does not start from its latest Warning Event. `volumeChanged`
 * says whether the new revision added or changed a volume (undefined: not known).
 */
export function explainPod(
  w: WarningView | undefined,
  since: number | undefined,
  volumeChanged: (name: string) => boolean | undefined,
): Explained | undefined {
  if (!w || tooOld(w, since)) return undefined;
  if (w.reason === 'FailedCreatePodSandBox') {
    return {
      owner: 'Node',
      cause: 'SandboxFailure',
      reason: w.reason,
      message: `the node cannot create the pod sandbox: "${truncate(w.message, 300)}"`,
    };
  }
  if (w.reason === 'FailedMount' || w.reason === 'FailedAttachVolume') {
    const vol = mountedVolume(w.message);
    const changed = vol !== undefined ? volumeChanged(vol) : undefined;
    const quoted = `"${truncate(w.message, 300)}"`;
    if (changed === true)
      return {
        owner: 'Revision',
        cause: 'VolumeMountFailure',
        reason: w.reason,
        message: `volume ${vol} that the new revision added or changed does not mount: ${quoted}`,
      };
    if (changed === false)
      return {
        owner: 'Node',
        cause: 'VolumeMountFailure',
        reason: w.reason,
        message: `volume ${vol}, unchanged by the new revision, does not mount on this node: ${quoted}`,
      };
    return { owner: 'Unknown', cause: 'VolumeMountFailure', reason: w.reason, message: `a volume does not mount: ${quoted}` };
  }
  return undefined;
}

const PROBE_FAILED = /^(Readiness|Startup) probe (failed|errored)/;

/** What a failing readiness or startup probe printed, quoted from the kubelet's latest `Unhealthy` Event. */
export function probeFailure(w: WarningView | undefined, since: number | undefined): string | undefined {
  if (!w || w.reason !== 'Unhealthy' || tooOld(w, since) || !PROBE_FAILED.test(w.message)) return undefined;
  return `"${truncate(w.message.trimEnd(), 300)}"`;
}
