/**
 * A rollout's high-water marks: any increase is progress, so a counter that goes down and up again is
 * not counted twice, and a mark the stored status lacks starts as a baseline.
 */
import type { LeftNode, ProgressMarks } from '../api/types.js';
import { STATUS_LIST_CAP } from './split.js';

export function marksOf(og: number, updated: number, available: number, ready: number, onTarget: number, oldGone: number): ProgressMarks {
  return { observedGeneration: og, updated, available, ready, onTarget, oldGone };
}

/** Returns the raised marks and whether any went up. */
export function raise(prev: ProgressMarks, cur: ProgressMarks): { marks: ProgressMarks; progressed: boolean } {
  const marks = { ...prev };
  let progressed = false;
  for (const k of Object.keys(cur) as (keyof ProgressMarks)[]) {
    const was = prev[k];
    const seen = cur[k] ?? 0;
    // A mark the stored status lacks starts here: a baseline, not progress.
    if (was === undefined) marks[k] = seen;
    else if (seen > was) {
      marks[k] = seen;
      progressed = true;
    }
  }
  return { marks, progressed };
}

/** The nodes that left the targets, by name, newest reason kept. */
export function mergeLeft(a: readonly LeftNode[] | undefined, b: readonly LeftNode[]): LeftNode[] {
  const m = new Map<string, LeftNode>();
  for (const l of [...(a ?? []), ...b]) m.set(l.node, l);
  return [...m.values()].sort((x, y) => x.node.localeCompare(y.node)).slice(0, STATUS_LIST_CAP);
}
