/**
 * What a guard remembers of its target's nodes between passes, to name the nodes that left.
 */
import type { LeftNode } from '../api/types.js';
import type { NodeView } from '../domain/observation.js';

/**
 * Remembers which nodes were one guard's targets on the previous pass, so that when DESIRED shrinks the
 * nodes that left can be named with their reason. It is a cache of earlier observations: after a
 * restart the count of nodes that left still comes from status (desiredAtStart), only the names may be
 * missing until the next change.
 */
export class TargetMemory {
  /**
   * The eligible node set the last time it agreed with the controller's DESIRED. It moves only then, so
   * a node that left is still named on the pass where the DaemonSet status catches up (node and
   * DaemonSet events arrive in either order).
   */
  private eligible: Baseline | undefined;
  /**
   * The baseline the last {@link diff} would move to. It becomes the baseline only on {@link commit},
   * once the pass that saw the departures has recorded them: a pass that waits for the cache, holds its
   * write or fails must see the same departures again, or the names are lost.
   */
  private pending: Baseline | undefined;

  /**
   * Nodes eligible at the baseline and not now: `left` still exist (a taint, a label, a selector
   * change), `removed` are gone from the cluster. Stages the next baseline for {@link commit}.
   */
  diff(
    uid: string,
    nodes: readonly NodeView[],
    existing: ReadonlySet<string>,
    settled: boolean,
    fingerprints: ReadonlyMap<string, string> = new Map(),
  ): { left: LeftNode[]; removed: string[] } {
    // Each eligible node with the fingerprint of its labels and taints, so that a node that leaves can
    // be told apart: did the node change (someone tainted it) or did the template stop selecting it?
    const now = new Map(nodes.filter((n) => n.eligible).map((n) => [n.node, fingerprints.get(n.node) ?? ''] as const));
    const prev = this.eligible;
    if (!prev || prev.uid !== uid) {
      // First sight of this target: nothing to compare with, so the baseline needs no confirmation.
      this.eligible = { uid, nodes: now };
      this.pending = undefined;
      return { left: [], removed: [] };
    }
    this.pending = settled ? { uid, nodes: now } : undefined;
    const left: LeftNode[] = [];
    const removed: string[] = [];
    const byName = new Map(nodes.map((n) => [n.node, n]));
    for (const [name, was] of prev.nodes) {
      if (now.has(name)) continue;
      if (!existing.has(name)) {
        removed.push(name);
        continue;
      }
      const n = byName.get(name);
      const l: LeftNode = { node: name, reason: n?.ineligibleReason ?? 'no longer a target' };
      const is = fingerprints.get(name);
      if (was !== '' && is !== undefined) l.nodeChanged = is !== was;
      left.push(l);
    }
    left.sort((a, b) => a.node.localeCompare(b.node));
    return { left, removed: removed.sort() };
  }

  /** The departures the last {@link diff} reported are recorded: move the baseline past them. */
  commit(): void {
    const next = this.pending;
    if (!next) return;
    this.pending = undefined;
    if (this.eligible && this.eligible.uid !== next.uid) return;
    this.eligible = next;
  }

  /** The target is gone: the next one seen is seen for the first time. */
  forget(): void {
    this.eligible = undefined;
    this.pending = undefined;
  }
}

/** The eligible nodes of the DaemonSet `uid`, each with the fingerprint of its labels and taints. */
interface Baseline {
  uid: string;
  nodes: Map<string, string>;
}
