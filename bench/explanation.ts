/**
 * The first explanation of a failing rollout: from a new pod's first failure (the bench's watch seeing
 * ImagePullBackOff or Unschedulable) to the first guard status that names a node so failing, with the
 * reason and the guard-level cause. Shared by the fleet-wide rollout and the explanation waves
 * (bench/waves.ts), so both measure the same thing.
 *
 * @module
 */
import type { SampleMoments } from './explanationParts.js';
import type { GuardObs, Observer } from './observer.js';

export type FailingCategory = 'broken' | 'exhausted';

/** What a failing category's guard must say: the cause, and the reason on a blocked node. */
export const EXPECTED: Record<FailingCategory, { cause: string; reason: string }> = {
  broken: { cause: 'ImagePullFailure', reason: 'ImagePullBackOff' },
  exhausted: { cause: 'InsufficientResources', reason: 'Unschedulable' },
};

/** One rollout's first explanation, in seconds; a field is absent when its moment was not seen. */
export interface Explanation {
  /** From the first new pod appearing to a status naming a failing node and the cause. */
  fromPodS?: number;
  /** From that pod's first failure to the same status: the figure the target is judged on. */
  fromFailureS?: number;
  /** From the failure to the first status naming the node with that reason, cause or not. */
  nodeNamedFromFailureS?: number;
  /** The sample's two ends, to account for its parts (bench/explanationParts.ts). */
  moments?: SampleMoments;
}

const secs = (ms: number): number => Math.round(ms) / 1000;

/**
 * The explanation of DaemonSet `ds` rolling at or after `since` to a revision other than `oldHash`,
 * from what the bench's watch saw: its pods (podLog) and the guard's statuses (guardLog).
 */
export function explanationOf(obs: Observer, ds: string, cat: FailingCategory, since: number, oldHash: string | undefined): Explanation {
  const exp = EXPECTED[cat];
  const hist = (obs.guardLog.get(ds) ?? []).filter((g) => g.t >= since);
  const newPods = [...obs.podLog.values()].filter((x) => x.ds === ds && x.hash !== oldHash && x.seenAt >= since);
  const failingNodes = new Set(newPods.filter((x) => x.failure === exp.reason && x.unit).map((x) => x.unit!));
  const firstPod = Math.min(...newPods.map((x) => x.seenAt));
  const failed = [...obs.podLog.entries()]
    .filter(([, x]) => x.ds === ds && x.hash !== oldHash && x.seenAt >= since && x.failedAt !== undefined)
    .sort(([, a], [, b]) => a.failedAt! - b.failedAt!)[0];
  const firstFailure = failed?.[1].failedAt ?? Number.POSITIVE_INFINITY;
  const namesNode = (g: GuardObs): boolean => g.blocked.some((b) => b.reason === exp.reason && failingNodes.has(b.node));
  const explained = hist.find((g) => g.cause === exp.cause && namesNode(g));
  const named = hist.find(namesNode);
  const out: Explanation = {};
  if (explained && Number.isFinite(firstPod)) out.fromPodS = secs(explained.t - firstPod);
  if (explained && Number.isFinite(firstFailure)) out.fromFailureS = secs(explained.t - firstFailure);
  if (named && Number.isFinite(firstFailure)) out.nodeNamedFromFailureS = secs(named.t - firstFailure);
  if (explained && failed) {
    const [pod, rec] = failed;
    const rv = explained.metadata.resourceVersion;
    out.moments = {
      pod,
      failedAt: rec.failedAt!,
      ...(rec.failureWrittenAt !== undefined ? { failureWrittenAt: rec.failureWrittenAt } : {}),
      explainedAt: explained.t,
      ...(obs.twinFailedAt.has(pod) ? { twinFailedAt: obs.twinFailedAt.get(pod)! } : {}),
      ...(rv !== undefined ? { explainedRv: rv } : {}),
    };
  }
  return out;
}

/**
 * Why a failing rollout has no first explanation sample, in words a report can carry: what the bench's
 * watch saw of its new pods (each with its first failure) and of the guard's statuses since `since`
 * (how many, how many with the expected cause, what the last one named). A sample needs a pod seen
 * failing with the expected reason and one status that names it with that reason and the cause.
 */
export function unexplainedWhy(obs: Observer, ds: string, cat: FailingCategory, since: number, oldHash: string | undefined): string {
  const exp = EXPECTED[cat];
  const pods = [...obs.podLog.entries()].filter(([, x]) => x.ds === ds && x.hash !== oldHash && x.seenAt >= since);
  const hist = (obs.guardLog.get(ds) ?? []).filter((g) => g.t >= since);
  const last = hist.at(-1);
  const seen = pods.map(
    ([name, x]) =>
      `${name} on ${x.unit ?? '?'}: ${x.failure ?? 'no failure'}${x.failedAt !== undefined ? ` at +${secs(x.failedAt - since)} s` : ''}`,
  );
  const named = last?.blocked.map((b) => `${b.node}: ${b.reason}`) ?? [];
  return (
    `${ds} (${cat}): new pods [${seen.join('; ')}]; ${hist.length} statuses, ${hist.filter((g) => g.cause === exp.cause).length} with cause ${exp.cause}; ` +
    `the last ${last ? `${last.state ?? '?'}/${last.cause ?? '?'} at +${secs(last.t - since)} s naming [${named.join('; ')}]` : 'none'}`
  );
}
