/**
 * Every second of a first explanation, accounted for: the bench's sample runs from its own watch seeing
 * a new pod fail to its own watch seeing the status that names it (bench/explanation.ts). The operator
 * logs the moments of the write that named it (bench/operatorLog.ts), joined here by the status's
 * resourceVersion. All moments are on this machine's one clock, so the parts add up to the sample:
 *
 * ```
 *   bench sees the failure ─benchToOperator→ operator sees it ─toPass→ pass begins ─pass→ PATCH sent
 *     ─write→ PATCH answered ─reader→ bench sees the status
 * ```
 *
 * `benchToOperator` is negative when the operator's watch delivered the failure first. Beside the parts,
 * how late each watch was behind the API server's write of the pod (its newest write stamp, k8s/writtenAt.ts): whole
 * seconds, so each reads 0 to 1 s high, enough to tell a watch seconds behind.
 *
 * @module
 */
import type { LoggedExplainingWrite } from './operatorLog.js';

/** The bench's ends of one sample and what joins them to the operator's write. */
export interface SampleMoments {
  /** The pod whose failure starts the sample. */
  pod: string;
  /** When the bench's watch first saw it failing (ms since the epoch). */
  failedAt: number;
  /** The API server's write of that failure (its newest write stamp, whole seconds). */
  failureWrittenAt?: number;
  /** When the bench's watch saw the explaining status, and that status's resourceVersion. */
  explainedAt: number;
  explainedRv?: string;
  /** When the bench's twin of the operator's pod watch saw that pod failing (BENCH_TWIN_WATCHES). */
  twinFailedAt?: number;
}

/** The parts of one sample, in seconds; they add up to it. */
export interface ExplanationParts {
  benchToOperator: number;
  toPass: number;
  pass: number;
  write: number;
  reader: number;
  /** How far each watch was behind the API server's write of the failure (0 to 1 s high). */
  benchWatchLag?: number;
  operatorWatchLag?: number;
  /**
   * False when the status that explained came with a later write than the one that named the node
   * anew: `reader` then holds the wait for that write as well as the bench's watch.
   */
  sameWrite?: false;
  /** How long after the write it came in the operator's watch delivered the event it first saw the failure in. */
  operatorEventLag?: number;
  /**
   * How much later than the write the bench first saw failing was the write of the failure the operator's
   * explaining write started from (the stamps are the server's, so one write reads 0 here).
   */
  operatorWriteAfterBench?: number;
  /**
   * The pod whose failure the explaining write started from, when it is not the sample's: the status
   * named a later failure first, and the sample's own pod later or never, so `benchToOperator` holds the
   * wait for that later failure, not a watch's delay.
   */
  operatorPod?: string;
  /** How much later than the namespace-wide watch the bench's twin of the operator's watch saw the failure. */
  twinAfterBench?: number;
}

export type PartName = 'benchToOperator' | 'toPass' | 'pass' | 'write' | 'reader';
export const PART_NAMES: readonly PartName[] = ['benchToOperator', 'toPass', 'pass', 'write', 'reader'];

const s = (ms: number): number => Math.round(ms) / 1000;

/** The parts of a sample, or undefined when the operator's write or its failure moment is not known. */
export function partsOf(m: SampleMoments, w: LoggedExplainingWrite | undefined, sameWrite = true): ExplanationParts | undefined {
  if (w?.failureSeenAt === undefined) return undefined;
  return {
    ...(sameWrite ? {} : { sameWrite: false as const }),
    benchToOperator: s(w.failureSeenAt - m.failedAt),
    toPass: s(w.passStartedAt - w.failureSeenAt),
    pass: s(w.writeStartedAt - w.passStartedAt),
    write: s(w.wroteAt - w.writeStartedAt),
    reader: s(m.explainedAt - w.wroteAt),
    ...(m.failureWrittenAt !== undefined
      ? { benchWatchLag: s(m.failedAt - m.failureWrittenAt), operatorWatchLag: s(w.failureSeenAt - m.failureWrittenAt) }
      : {}),
    ...(w.failureWrittenAt !== undefined ? { operatorEventLag: s(w.failureSeenAt - w.failureWrittenAt) } : {}),
    ...(w.failureWrittenAt !== undefined && m.failureWrittenAt !== undefined
      ? { operatorWriteAfterBench: s(w.failureWrittenAt - m.failureWrittenAt) }
      : {}),
    ...(w.failurePod !== undefined && w.failurePod !== m.pod ? { operatorPod: w.failurePod } : {}),
    ...(m.twinFailedAt !== undefined ? { twinAfterBench: s(m.twinFailedAt - m.failedAt) } : {}),
  };
}

/** The part that took longest. */
export function largestPart(p: ExplanationParts): PartName {
  return PART_NAMES.reduce((a, b) => (p[b] > p[a] ? b : a));
}
