/**
 * RolloutGuardPolicy planning: which DaemonSets a cluster-wide policy guards, which guard it keeps next
 * to each, and which it must delete. Pure: the policy reconciler gathers the views from its caches and
 * applies the plan.
 *
 * Rules, in order, for each DaemonSet a policy selects:
 *  1. `rolloutguard.dev/ignore: "true"` on the DaemonSet → never guarded by a policy;
 *  2. a hand-written RolloutGuard (one no policy generated) targets it → the hand-written one wins;
 *  3. several policies select it → the one with the lexicographically smallest name wins, every loser
 *     reports the conflict (deterministic, independent of event order);
 *  4. otherwise the policy keeps exactly one generated guard for it.
 *
 * A guard with a selector is planned the same way, as a policy confined to its own namespace
 * (PolicyView.namespace). Among the claimants of one DaemonSet, selector guards rank before policies
 * (the namespace's own choice is the more specific one), then names sort.
 */
import type { LabelSelector, PolicyView } from '../api/objects.js';
import { DAEMONSET_KIND } from '../api/names.js';
import type { GuardSpecInput } from '../api/types.js';

/** metav1.LabelSelector semantics: an empty or absent selector matches everything. */
export function matchesSelector(sel: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const r of sel?.matchExpressions ?? []) {
    const v = l[r.key];
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (v === undefined || !values.includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && values.includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
      default:
        return false; // the CRD schema rejects other operators; fail closed
    }
  }
  return true;
}

export interface NamespaceView {
  name: string;
  labels: Record<string, string>;
}

export interface DaemonSetRef {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  ignored: boolean;
}

export interface GuardRefView {
  namespace: string;
  name: string;
  target: string;
  /** The policy label, when a policy generated it. */
  policy?: string;
  /** The selector guard label, when a guard with a selector generated it. */
  selectorGuard?: string;
  /** UID of the controller owner, for generated guards. */
  ownerUid?: string;
  spec: GuardSpecInput;
}

export interface DesiredGuard {
  namespace: string;
  name: string;
  target: string;
  spec: GuardSpecInput;
}

export interface Conflict {
  namespace: string;
  daemonSet: string;
  /** OverlappingPolicy between two policies; OverlappingSelector when a selector guard is one of them. */
  reason: 'HandWrittenGuard' | 'OverlappingPolicy' | 'OverlappingSelector';
  /** The guard or policy that guards it instead. */
  winner: string;
}

export interface PolicyPlan {
  matched: number;
  desired: DesiredGuard[];
  /** Generated guards of this policy to delete (their DaemonSet no longer matches, or another wins). */
  deletions: GuardRefView[];
  conflicts: Conflict[];
}

/** FNV-1a, 32 bit: a short stable suffix for names that would exceed 63 characters. */
function fnv32(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The generated guard's name: `<policy>-<daemonset>`, cut to 63 characters with a hash of the full
 * name when longer, so it is deterministic, unique per (policy, DaemonSet) and a valid label value.
 */
export function generatedGuardName(policy: string, daemonSet: string): string {
  const full = `${policy}-${daemonSet}`;
  if (full.length <= 63) return full;
  return `${full.slice(0, 54).replace(/[-.]+$/, '')}-${fnv32(full)}`;
}

/** The spec a policy gives its guards; fields the policy leaves out take the CRD defaults. */
export function guardSpecFor(policy: PolicyView, target: string): GuardSpecInput {
  const spec: GuardSpecInput = { targetRef: { kind: DAEMONSET_KIND, name: target } };
  const g = policy.guard ?? {};
  if (g.suspectAfterSeconds !== undefined) spec.suspectAfterSeconds = g.suspectAfterSeconds;
  if (g.progressDeadlineSeconds !== undefined) spec.progressDeadlineSeconds = g.progressDeadlineSeconds;
  if (g.onStall !== undefined) spec.onStall = { ...g.onStall };
  if (g.failedNodesThreshold !== undefined) spec.failedNodesThreshold = g.failedNodesThreshold;
  if (g.bakeSeconds !== undefined) spec.bakeSeconds = g.bakeSeconds;
  return spec;
}

function isEmpty(sel: LabelSelector | undefined): boolean {
  return Object.keys(sel?.matchLabels ?? {}).length === 0 && (sel?.matchExpressions ?? []).length === 0;
}

function policySelects(p: PolicyView, ns: NamespaceView | undefined, ds: DaemonSetRef): boolean {
  // A selector guard's empty selector selects nothing (the CRD refuses it): never every DaemonSet.
  if (p.namespace !== undefined) return ds.namespace === p.namespace && !isEmpty(p.selector) && matchesSelector(p.selector, ds.labels);
  return ns !== undefined && matchesSelector(p.namespaceSelector, ns.labels) && matchesSelector(p.selector, ds.labels);
}

/** How a claimant is named in conflicts: `rolloutguard/<name>` or `rolloutguardpolicy/<name>`. */
export function claimantRef(p: PolicyView): string {
  return p.namespace !== undefined ? `rolloutguard/${p.name}` : `rolloutguardpolicy/${p.name}`;
}

/** Sort key of claimants: selector guards first, then by name. */
const rank = (p: PolicyView): string => `${p.namespace !== undefined ? 0 : 1}/${p.name}`;

/** Whether generated guard `g` is `p`'s own: its label names `p` and its controller owner is `p`. */
export function generatedBy(g: GuardRefView, p: PolicyView): boolean {
  if (g.ownerUid !== p.uid) return false;
  return p.namespace !== undefined ? g.selectorGuard === p.name && g.namespace === p.namespace : g.policy === p.name;
}

/** Plans one policy against the whole (cached) world. */
export function planPolicy(
  policy: PolicyView,
  allPolicies: readonly PolicyView[],
  namespaces: readonly NamespaceView[],
  daemonSets: readonly DaemonSetRef[],
  guards: readonly GuardRefView[],
): PolicyPlan {
  const nsByName = new Map(namespaces.map((n) => [n.name, n]));
  const handWritten = new Map<string, GuardRefView>();
  for (const g of guards) if (!g.policy && !g.selectorGuard) handWritten.set(`${g.namespace}/${g.target}`, g);
  const mine = guards.filter((g) => generatedBy(g, policy));
  const self = rank(policy);

  const desired: DesiredGuard[] = [];
  const conflicts: Conflict[] = [];
  let matched = 0;
  for (const ds of daemonSets) {
    const ns = nsByName.get(ds.namespace);
    if (!policySelects(policy, ns, ds)) continue;
    if (ds.ignored) continue;
    matched++;
    const hw = handWritten.get(`${ds.namespace}/${ds.name}`);
    if (hw) {
      conflicts.push({ namespace: ds.namespace, daemonSet: ds.name, reason: 'HandWrittenGuard', winner: `rolloutguard/${hw.name}` });
      continue;
    }
    const claimants = allPolicies.filter((p) => policySelects(p, ns, ds)).sort((a, b) => rank(a).localeCompare(rank(b)));
    const winner = claimants[0];
    const others = claimants.filter((p) => rank(p) !== self);
    const overlap = (w: PolicyView): Conflict => ({
      namespace: ds.namespace,
      daemonSet: ds.name,
      reason:
        policy.namespace === undefined && claimants.every((p) => p.namespace === undefined) ? 'OverlappingPolicy' : 'OverlappingSelector',
      winner: claimantRef(w),
    });
    if (winner && rank(winner) !== self) {
      conflicts.push(overlap(winner));
      continue;
    }
    // The winner reports the overlap too, so both claimants show it.
    if (others.length > 0) conflicts.push(overlap(policy));
    desired.push({
      namespace: ds.namespace,
      name: generatedGuardName(policy.name, ds.name),
      target: ds.name,
      spec: guardSpecFor(policy, ds.name),
    });
  }
  const keep = new Set(desired.map((d) => `${d.namespace}/${d.name}`));
  const deletions = mine.filter((g) => !keep.has(`${g.namespace}/${g.name}`));
  const order = (a: { namespace: string; name?: string; daemonSet?: string }, b: typeof a): number =>
    a.namespace.localeCompare(b.namespace) || (a.name ?? a.daemonSet ?? '').localeCompare(b.name ?? b.daemonSet ?? '');
  return { matched, desired: desired.sort(order), deletions: deletions.sort(order), conflicts: conflicts.sort(order) };
}
