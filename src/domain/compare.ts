/**
 * Judgement by comparison: would the previous revision fail the same way, on this node, now?
 *
 * A symptom on the new pod does not say whose fault it is. The comparison does:
 *
 *   what the new pod shows                      compared with                          owner
 *   surge pod: "didn't have free ports"         the old template has the same port     Configuration (it can never surge)
 *                                               the new template added the port        Revision
 *   "Insufficient cpu" beside the old pod       the old template requests the same     Configuration (no room for two)
 *   "Insufficient cpu" with no old pod left     the old template requests the same     Node (something else took the room)
 *                                               the new template raised the request    Revision
 *   fails on a node                             the old pod failed there the same way  Node (it was broken before)
 *                                               before the rollout started
 *   node NotReady right after the new pod       Ready under the old revision, and no   Revision, once failedNodesThreshold
 *   started on it (the kubelet reports False)   node still on the old revision fell    nodes show it
 *
 * Only the facets that such failures are about are kept of each revision's template (its host ports,
 * its summed requests, who it runs as: see k8s/slim.ts), never the template itself.
 */
import { hostOf } from './split.js';
import type { AdmissionComparison, RolloutStatus, TemplateFacets, UnavailableAtStart } from '../api/types.js';
import type { NodeView, PodView, RevisionView } from './observation.js';

/** The failure reason kept in rollout.failures for a node the new revision took down. */
export const KNOCKED_OUT = 'NodeNotReady';

/** API times (creationTimestamp, a condition's lastTransitionTime) are kept to the second. */
const TIME_PRECISION_MS = 1_000;

/** How long after the new pod was created a node turning NotReady is read as the pod's doing. */
export const KNOCKOUT_WINDOW_MS = 120_000;

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource.Quantity as a number ("100m" → 0.1, "64Mi" → 67108864); undefined when unreadable. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return undefined;
  const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)$/.exec(q.trim());
  if (!m) return undefined;
  const mult = SUFFIX[m[3] ?? ''];
  if (mult === undefined) return undefined;
  const n = Number(m[1]) * 10 ** Number(m[2] ?? 0) * mult;
  return Number.isFinite(n) ? n : undefined;
}

/** A quantity as people write it: cpu in cores or millicores, bytes in Mi/Gi, counts plain. */
export function fmtQuantity(resource: string, n: number): string {
  if (resource === 'cpu') return n < 1 ? `${Math.round(n * 1000)}m` : `${+n.toFixed(3)}`;
  if (/memory|storage/.test(resource)) return n >= 2 ** 30 ? `${+(n / 2 ** 30).toFixed(2)}Gi` : `${+(n / 2 ** 20).toFixed(1)}Mi`;
  return `${+n.toFixed(3)}`;
}

/** The two templates of a rollout, when both are known. */
export interface TemplatePair {
  from: TemplateFacets;
  to: TemplateFacets;
}

/** What the new template changed among the facets, in words ("hostPort 8080/TCP added", "cpu 100m → 2"). */
export function templateDiff(p: TemplatePair): string[] {
  const out: string[] = [];
  const added = p.to.hostPorts.filter((x) => !p.from.hostPorts.includes(x));
  const removed = p.from.hostPorts.filter((x) => !p.to.hostPorts.includes(x));
  if (added.length > 0) out.push(`hostPort ${added.join(', ')} added`);
  if (removed.length > 0) out.push(`hostPort ${removed.join(', ')} removed`);
  for (const r of [...new Set([...Object.keys(p.from.requests), ...Object.keys(p.to.requests)])].sort()) {
    const a = p.from.requests[r] ?? 0;
    const b = p.to.requests[r] ?? 0;
    if (a !== b) out.push(`${r} request ${fmtQuantity(r, a)} → ${fmtQuantity(r, b)}`);
  }
  if ((p.from.serviceAccountName ?? 'default') !== (p.to.serviceAccountName ?? 'default'))
    out.push(`serviceAccountName ${p.from.serviceAccountName ?? 'default'} → ${p.to.serviceAccountName ?? 'default'}`);
  if ((p.from.priorityClassName ?? '') !== (p.to.priorityClassName ?? ''))
    out.push(`priorityClassName ${p.from.priorityClassName ?? '(none)'} → ${p.to.priorityClassName ?? '(none)'}`);
  if (p.from.security !== p.to.security) out.push('securityContext, host namespaces or volume types changed');
  return out;
}

/** The resources a scheduler message says are short: "Insufficient cpu, 1 Insufficient memory" → [cpu, memory]. */
function shortResources(message: string): string[] {
  const out = new Set<string>();
  for (const m of message.matchAll(/Insufficient ([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?:\/[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)?)/gi))
    out.add(m[1] ?? '');
  if (/Too many pods/i.test(message)) out.add('pods');
  return [...out].filter((r) => r !== '');
}

/** The verdict of a comparison on one node: whose fault it is, and the sentence that says which comparison decided. */
export interface Compared {
  owner: 'Revision' | 'Node' | 'Configuration';
  comparison: string;
}

/**
 * A new pod the scheduler cannot place, compared with the previous template. `surge`: the node still
 * runs a live pod of another revision, so the new pod must fit beside it. Undefined when the message is
 * about something the facets do not cover, or when either template is not known.
 */
export function compareScheduling(message: string, surge: boolean, t: TemplatePair | undefined): Compared | undefined {
  if (!t) return undefined;
  // The scheduler's words for a pod whose bound volume is pinned to other nodes: "didn't match
  // PersistentVolume's node affinity" (VolumeBinding today), "volume node affinity conflict" (before).
  if (/didn't match PersistentVolume's node affinity|volume node affinity conflict/i.test(message)) return compareVolumePinned(t);
  if (/free ports/i.test(message)) {
    const added = t.to.hostPorts.filter((x) => !t.from.hostPorts.includes(x));
    if (added.length > 0)
      return {
        owner: 'Revision',
        comparison: `the new revision added hostPort ${added.join(', ')}, which another pod on the node holds; the previous revision did not ask for it`,
      };
    const same = t.to.hostPorts.join(', ');
    if (same === '') return undefined;
    return surge
      ? {
          owner: 'Configuration',
          comparison: `the previous revision has the same hostPort ${same} and would not fit either: maxSurge with a hostPort cannot surge (the new pod needs the port the old one holds); set maxSurge 0 and maxUnavailable 1`,
        }
      : { owner: 'Node', comparison: `the previous revision has the same hostPort ${same}: another pod on the node holds it` };
  }
  const short = shortResources(message);
  if (short.length === 0) return undefined;
  const raised = short.filter((r) => (t.to.requests[r] ?? 0) > (t.from.requests[r] ?? 0));
  if (raised.length > 0) {
    const what = raised.map((r) => `${r} ${fmtQuantity(r, t.from.requests[r] ?? 0)} → ${fmtQuantity(r, t.to.requests[r] ?? 0)}`).join(', ');
    return {
      owner: 'Revision',
      comparison: `the new revision raises its requests (${what}) beyond what the node has free; the previous revision fitted`,
    };
  }
  const same = short.map((r) => (r === 'pods' ? 'a pod slot' : `${r} ${fmtQuantity(r, t.to.requests[r] ?? 0)}`)).join(', ');
  return surge
    ? {
        owner: 'Configuration',
        comparison: `the previous revision requests the same (${same}) and would not fit beside the old pod either: the node has room for one pod, and maxSurge needs room for two; set maxSurge 0 or give the nodes room`,
      }
    : {
        owner: 'Node',
        comparison: `the previous revision requests the same (${same}) and fitted before: other pods took the room on this node`,
      };
}

/**
 * A pod whose volume is pinned to a node (a local PersistentVolume's node affinity) that does not take
 * it. With the previous revision's placement, its pod needs the same volume on the same node and is
 * refused the same way: the node (tainted, cordoned, gone), not the revision. A revision that changed
 * its placement (nodeSelector, affinity, tolerations) has moved its pods away from their volumes.
 */
function compareVolumePinned(t: TemplatePair): Compared | undefined {
  if (t.from.placement === undefined || t.to.placement === undefined) return undefined;
  if (t.from.placement !== t.to.placement)
    return {
      owner: 'Revision',
      comparison:
        "the new revision changed where its pods may run (nodeSelector, node affinity or tolerations) and its volume's node is not among those places; the previous revision's placement reached it",
    };
  return {
    owner: 'Node',
    comparison:
      "the pod's volume is pinned to a node that does not take the pod now (tainted, cordoned or gone); the previous revision has the same placement and needs the same volume, so it would be refused the same way: repair or untaint the node, or move the volume",
  };
}

/** The node's entry among the nodes whose old pod was not available when the rollout started. */
export function unavailableBefore(list: readonly UnavailableAtStart[] | undefined, node: string): UnavailableAtStart | undefined {
  return list?.find((u) => u.node === node);
}

/**
 * The entry of unit `unit`, or, for a unit that is not a node (a Deployment's pod, whose name is new in
 * every rollout; a StatefulSet's ordinal), of another unit whose old pod failed on the same node `host`:
 * the previous revision was already failing on that node.
 */
export function unavailableBeforeOn(
  list: readonly UnavailableAtStart[] | undefined,
  unit: string,
  host: string | undefined,
): UnavailableAtStart | undefined {
  return unavailableBefore(list, unit) ?? (host !== undefined && host !== unit ? list?.find((u) => u.host === host) : undefined);
}

/** A unit the new revision took down: its node turned NotReady soon after the revision's pod started there. */
export interface KnockedOut {
  node: string;
  /** The node it runs on, when the unit is not one (a StatefulSet's ordinal, a Deployment's pod). */
  host?: string;
  pod: PodView;
  /** When the node turned NotReady. */
  since: string;
  /** How long after the pod's creation. */
  afterMs: number;
}

/**
 * Nodes where the new revision took its own node down: the kubelet reports the node NotReady (False,
 * not Unknown: a dead kubelet reports nothing), it turned so after the rollout started and within
 * {@link KNOCKOUT_WINDOW_MS} after a pod of the new revision was created on it, it was not failing
 * before the rollout, and no node that runs only the previous revision turned NotReady during the
 * rollout (if they fall too, the fleet has a problem the revision does not explain).
 */
export function knockedOutNodes(
  nodes: readonly NodeView[],
  targetHash: string,
  rolloutStart: number,
  before: readonly UnavailableAtStart[] | undefined,
): KnockedOut[] {
  const fellDuring = (n: NodeView): number | undefined => {
    const h = n.health;
    if (!h || h.ready === 'True' || !h.since) return undefined;
    const t = Date.parse(h.since);
    // Condition times have one-second precision, the rollout's start is our own clock's.
    return Number.isFinite(t) && t >= rolloutStart - TIME_PRECISION_MS ? t : undefined;
  };
  const oldFell = nodes.some((n) => fellDuring(n) !== undefined && !n.pods.some((p) => p.hash === targetHash));
  if (oldFell) return [];
  const out: KnockedOut[] = [];
  for (const n of nodes) {
    const t = fellDuring(n);
    if (t === undefined || n.health?.ready !== 'False' || unavailableBefore(before, n.node)) continue;
    const pod = n.pods.find((p) => p.hash === targetHash);
    const created = pod ? Date.parse(pod.createdAt) : NaN;
    if (!pod || !Number.isFinite(created) || t < created - TIME_PRECISION_MS || t - created > KNOCKOUT_WINDOW_MS) continue;
    out.push({ node: n.node, ...hostOf(n), pod, since: n.health.since!, afterMs: t - created });
  }
  return out;
}

/**
 * What the previous revision did, for judging by comparison (compare.ts): its template's facets beside
 * the new one's, the nodes where it was already failing when the rollout started, the nodes the new
 * revision took down, and whether admission refuses a pod of it too.
 */
export interface Comparison {
  templates?: TemplatePair;
  before?: readonly UnavailableAtStart[];
  /** Nodes recorded as taken down by the new revision (rollout.failures, reason NodeNotReady). */
  knockedOut?: readonly string[];
  /** The evidence reached failedNodesThreshold: the nodes taken down blame the revision. */
  enough?: boolean;
  threshold: number;
  admission?: AdmissionComparison;
  /** The ControllerRevision of the revision the rollout started from, when it can be tried (cached, not the target). */
  previous?: string;
}

/** What a rollout compares with its previous revision, from what it recorded and the revisions cached. */
export function comparisonOf(
  revisions: readonly RevisionView[],
  rollout: Readonly<RolloutStatus> | undefined,
  threshold: number,
): Comparison | undefined {
  if (!rollout) return undefined;
  const facets = (hash: string | undefined): TemplateFacets | undefined =>
    hash === undefined ? undefined : revisions.find((r) => r.hash === hash)?.facets;
  const from = facets(rollout.fromRevision?.hash);
  const to = facets(rollout.toRevision.hash);
  const c: Comparison = { threshold, enough: (rollout.failures?.count ?? 0) >= threshold };
  if (from && to && rollout.fromRevision?.hash !== rollout.toRevision.hash) c.templates = { from, to };
  if (rollout.unavailableAtStart) c.before = rollout.unavailableAtStart;
  const down = (rollout.failures?.nodes ?? []).filter((f) => f.reason === KNOCKED_OUT).map((f) => f.node);
  if (down.length > 0) c.knockedOut = down;
  if (rollout.admission?.forHash === rollout.toRevision.hash) c.admission = rollout.admission;
  const prevRev =
    rollout.fromRevision?.hash !== rollout.toRevision.hash ? revisions.find((r) => r.hash === rollout.fromRevision?.hash) : undefined;
  if (prevRev) c.previous = prevRev.name;
  return c;
}

/**
 * Nodes where the previous revision fails now though it ran when the rollout started: a live pod of it
 * restarting or waiting on a failure. The caller passes only nodes that look healthy (attribute.ts,
 * nodeFault): on a sick node the pod's failure is the node's. Restoring the revision would restore that.
 */
export function previousFailsNow(
  nodes: readonly NodeView[],
  fromHash: string,
  toHash: string,
  before: readonly UnavailableAtStart[] | undefined,
): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    if (!n.eligible || unavailableBefore(before, n.node)) continue;
    const old = n.pods.find((p) => p.hash === fromHash && p.hash !== toHash && !p.deleting);
    if (old && !old.available && old.restartCount > 0) out.push(n.node);
  }
  return out;
}

/** What the admission dry run of a pod of the previous revision came to. */
export interface AdmissionOutcome {
  result: AdmissionComparison['result'];
  message: string;
}

/** Folds the admission comparison into the rollout it was made for (nothing when the rollout moved on). */
export function recordAdmission<S extends { rollout?: RolloutStatus }>(
  status: Readonly<S>,
  revisionName: string,
  forHash: string,
  outcome: AdmissionOutcome,
  nowIso: string,
): S {
  if (!status.rollout || status.rollout.toRevision.hash !== forHash) return { ...status };
  const admission: AdmissionComparison = {
    forHash,
    revisionName,
    result: outcome.result,
    message: outcome.message.slice(0, 500),
    at: nowIso,
  };
  return { ...status, rollout: { ...status.rollout, admission } };
}
