/**
 * The per-node picture of a rollout: which revision each node runs, which nodes are blocked on the
 * target revision and why, which nodes that should run the pod have none. This is the "split" that
 * `kubectl get ds` hides behind READY 2/3.
 */
import { podBlockReason } from './causes.js';
import type { BlockedNode, EmptyNode, GenerationStatus } from '../api/types.js';
import type { TargetView, NodeView, PodView, RevisionView } from './observation.js';

/** Lists in status are capped so a 5,000-node DaemonSet cannot blow the object size; counts stay exact. */
export const STATUS_LIST_CAP = 20;

/**
 * rollout.unavailableAtStart names up to this many nodes (the CRD's maxItems): it is evidence, not a
 * display, and each node past it is one whose failures the guard could no longer tell from the new
 * revision's (see rollout.unavailableAtStartUnlisted).
 */
export const UNAVAILABLE_AT_START_CAP = 100;

/**
 * The node a unit that is not a node ran on (an ordinal's or a pod's `host`), as an entry of
 * rollout.unavailableAtStart records it: a Deployment's new pods have names of their own, so only the
 * node ties them to the old pods that failed before the rollout (compare.ts unavailableBeforeOn).
 */
export function hostOf(u: { node: string; host?: string }): { host?: string } {
  return u.host !== undefined && u.host !== u.node ? { host: u.host } : {};
}

export interface Split {
  generations: GenerationStatus[];
  blocked: BlockedNode[];
  empty: EmptyNode[];
  /** Eligible nodes whose oldest live pod is an available pod of the target revision. */
  onTarget: number;
  /**
   * Eligible nodes with no pod of another revision left, not even a terminating one: each old pod the
   * kubelet removes raises it. Zero without a target revision.
   */
  oldGone: number;
  /** Nodes that are eligible. */
  eligible: number;
  /** The revision the split was computed for. */
  targetHash?: string;
}

function live(pods: readonly PodView[]): PodView[] {
  return pods.filter((p) => !p.deleting);
}

/**
 * The pod a node is counted by in the generations: its newest live pod, the one the rollout put there
 * last. A node holds two live pods while a surge pod starts beside the old one (or cannot start: a host
 * port or requests that leave no room), and it is still one node: counting it under both revisions made
 * three nodes read as four.
 */
function newestPod(pods: readonly PodView[]): PodView | undefined {
  let out: PodView | undefined;
  for (const p of pods) if (!out || p.createdAt > out.createdAt || (p.createdAt === out.createdAt && p.name > out.name)) out = p;
  return out;
}

/** Why a unit has no pod, in its own terms: a node without its daemon pod, an ordinal without its pod. */
function noPodMessage(n: Readonly<NodeView>): string {
  return n.ordinal === undefined ? 'no daemon pod exists on this node' : `no pod exists for ordinal ${n.ordinal}`;
}

/**
 * Computes the split for `targetHash` (the revision the DaemonSet is rolling to). Without a target hash
 * (the controller has not recorded the revision yet) nothing is blocked: there is nothing to wait for.
 */
export function computeSplit(nodes: readonly NodeView[], revisions: readonly RevisionView[], targetHash: string | undefined): Split {
  const revByHash = new Map(revisions.map((r) => [r.hash, r.revision]));
  const gens = new Map<string, GenerationStatus>();
  const blocked: BlockedNode[] = [];
  const empty: EmptyNode[] = [];
  let onTarget = 0;
  let oldGone = 0;
  let eligible = 0;

  for (const n of nodes) {
    const pods = live(n.pods);
    const counted = newestPod(pods);
    if (counted) {
      let g = gens.get(counted.hash);
      if (!g) {
        g = { hash: counted.hash, images: [...counted.images], nodes: 0, ready: 0 };
        const rev = revByHash.get(counted.hash);
        if (rev !== undefined) g.revision = rev;
        gens.set(counted.hash, g);
      }
      g.nodes++;
      if (counted.ready) g.ready++;
    }
    if (!n.eligible) continue;
    eligible++;
    if (targetHash !== undefined && !n.pods.some((p) => p.hash !== targetHash)) oldGone++;

    if (pods.length === 0) {
      const terminating = n.pods.length > 0;
      const e: EmptyNode = {
        node: n.node,
        reason: terminating ? 'Terminating' : 'NoPod',
        message: terminating ? 'the old pod is terminating and no new pod exists yet' : noPodMessage(n),
      };
      if (n.host !== undefined) e.host = n.host;
      empty.push(e);
      continue;
    }
    if (targetHash === undefined) continue;
    const target = pods.filter((p) => p.hash === targetHash);
    if (target.some((p) => p.available)) {
      // Counted as updated by the controller only once the old pod is gone (the oldest pod wins).
      if (!pods.some((p) => p.hash !== targetHash)) onTarget++;
      continue;
    }
    const pod = target[0];
    if (!pod) continue; // old revision only: waiting its turn, not blocked
    const { reason, message } = podBlockReason(pod);
    const b: BlockedNode = { node: n.node, pod: pod.name, hash: pod.hash, reason, message };
    if (n.host !== undefined) b.host = n.host;
    if (pod.restartCount > 0) b.restarts = pod.restartCount;
    const rev = revByHash.get(pod.hash);
    if (rev !== undefined) b.revision = rev;
    blocked.push(b);
  }

  const generations = [...gens.values()].sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0) || a.hash.localeCompare(b.hash));
  blocked.sort((a, b) => a.node.localeCompare(b.node));
  empty.sort((a, b) => a.node.localeCompare(b.node));
  const out: Split = { generations, blocked, empty, onTarget, oldGone, eligible };
  if (targetHash !== undefined) out.targetHash = targetHash;
  return out;
}

/**
 * The split of a settled DaemonSet whose pods are not cached (see podInterest.ts), from its counters: every
 * node the controller targets runs one ready, available pod of the current revision, as the pods would
 * show. Nothing is blocked or empty: the counters say so.
 */
export function splitFromCounters(
  target: Pick<TargetView, 'desired' | 'ready' | 'images'>,
  eligible: number,
  current: RevisionView | undefined,
): Split {
  const generations: GenerationStatus[] = [];
  if (current && target.desired > 0)
    generations.push({
      hash: current.hash,
      images: [...target.images],
      nodes: target.desired,
      ready: target.ready,
      revision: current.revision,
    });
  const out: Split = { generations, blocked: [], empty: [], onTarget: target.desired, oldGone: current ? target.desired : 0, eligible };
  if (current) out.targetHash = current.hash;
  return out;
}

/** The hash most nodes run other than `exclude`: the generation a rollout started from. */
export function dominantOtherHash(gens: readonly GenerationStatus[], exclude: string | undefined): GenerationStatus | undefined {
  return [...gens].filter((g) => g.hash !== exclude).sort((a, b) => b.nodes - a.nodes || (b.revision ?? 0) - (a.revision ?? 0))[0];
}
