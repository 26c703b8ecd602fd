/**
 * RolloutGuardPolicy planning: which workloads a cluster-wide policy guards, which guard it keeps next
 * to each, and which it must delete. Pure: the policy reconciler gathers the views from its caches and
 * applies the plan.
 *
 * A policy chooses workloads of the kinds it lists (`targetKinds`, DaemonSet alone when left out, so a
 * policy written before StatefulSets were guarded keeps choosing what it chose). Rules, in order, for
 * each workload a policy selects:
 *  1. `rolloutguard.dev/ignore: "true"` on the workload → never guarded by a policy;
 *  2. a hand-written RolloutGuard (one no policy generated) targets it → the hand-written one wins;
 *  3. several policies select it → the one with the lexicographically smallest name wins, every loser
 *     reports the conflict (deterministic, independent of event order);
 *  4. otherwise the policy keeps exactly one generated guard for it.
 * A claim is on a kind and a name: a DaemonSet and a StatefulSet of the same name are two workloads.
 *
 * A guard with a selector is planned the same way, as a policy confined to its own namespace
 * (PolicyView.namespace). Among the claimants of one workload, selector guards rank before policies
 * (the namespace's own choice is the more specific one), then names sort.
 */
import type { LabelSelector, PolicyView } from '../api/objects.js';
import { DEFAULT_KIND, KINDS, compareKinds } from '../api/kinds.js';
import type { GuardSpecInput, TargetKind } from '../api/types.js';

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

/** A workload a policy may choose: its kind, name and labels, and whether it opted out of policies. */
export interface WorkloadRef {
  kind: TargetKind;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  ignored: boolean;
}

export interface GuardRefView {
  namespace: string;
  name: string;
  /** The kind and name of its target (empty for a guard with a selector). */
  kind: TargetKind;
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
  kind: TargetKind;
  target: string;
  spec: GuardSpecInput;
}

export interface Conflict {
  namespace: string;
  kind: TargetKind;
  /** The workload's name. */
  name: string;
  /** OverlappingPolicy between two policies; OverlappingSelector when a selector guard is one of them. */
  reason: 'HandWrittenGuard' | 'OverlappingPolicy' | 'OverlappingSelector';
  /** The guard or policy that guards it instead. */
  winner: string;
}

export interface PolicyPlan {
  /** Workloads selected, not counting those that opted out; `matchedByKind` splits the count by kind. */
  matched: number;
  matchedByKind: Partial<Record<TargetKind, number>>;
  desired: DesiredGuard[];
  /** Generated guards of this policy to delete (their workload no longer matches, or another wins). */
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

/** The kinds a policy chooses: DaemonSets alone unless it lists others. */
export function kindsOf(p: PolicyView): readonly TargetKind[] {
  return p.targetKinds && p.targetKinds.length > 0 ? p.targetKinds : [DEFAULT_KIND];
}

/** The suffix that tells a generated guard's kind by its name; a DaemonSet's guard has none (as before kinds). */
const nameSuffix = (kind: TargetKind): string => KINDS[kind].guardNameSuffix;

function shortened(full: string): string {
  if (full.length <= 63) return full;
  return `${full.slice(0, 54).replace(/[-.]+$/, '')}-${fnv32(full)}`;
}

/**
 * The generated guard's name: `<policy>-<daemonset>`, or `<policy>-<statefulset>-sts`, cut to 63
 * characters with a hash of the full name when longer, so it is deterministic and a valid label value.
 * A name another workload's guard of the same plan already took gets the hash of its kind and name
 * (see planPolicy), so names stay unique per (policy, kind, workload).
 */
export function generatedGuardName(policy: string, workload: string, kind: TargetKind = DEFAULT_KIND): string {
  return shortened(`${policy}-${workload}${nameSuffix(kind)}`);
}

/** The name when {@link generatedGuardName}'s is taken: the same, made unique by a hash of kind and name. */
function disambiguated(policy: string, workload: string, kind: TargetKind): string {
  const tag = fnv32(`${kind}/${workload}`);
  const base = `${policy}-${workload}${nameSuffix(kind)}`;
  return `${base.slice(0, 54).replace(/[-.]+$/, '')}-${tag}`;
}

/** The spec a policy gives its guards; fields the policy leaves out take the CRD defaults. */
export function guardSpecFor(policy: PolicyView, target: string, kind: TargetKind = DEFAULT_KIND): GuardSpecInput {
  const spec: GuardSpecInput = { targetRef: { kind, name: target } };
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

function policySelects(p: PolicyView, ns: NamespaceView | undefined, w: WorkloadRef): boolean {
  if (!kindsOf(p).includes(w.kind)) return false;
  // A selector guard's empty selector selects nothing (the CRD refuses it): never every workload.
  if (p.namespace !== undefined) return w.namespace === p.namespace && !isEmpty(p.selector) && matchesSelector(p.selector, w.labels);
  return ns !== undefined && matchesSelector(p.namespaceSelector, ns.labels) && matchesSelector(p.selector, w.labels);
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

/** What a policy's plan decides for one workload it selects: guard it, or name who does instead. */
type Claim = { conflict: Conflict; guarded: boolean } | { conflict?: undefined; guarded: true };

function claimOf(
  policy: PolicyView,
  allPolicies: readonly PolicyView[],
  ns: NamespaceView | undefined,
  w: WorkloadRef,
  handWritten: ReadonlyMap<string, GuardRefView>,
): Claim {
  const at = { namespace: w.namespace, kind: w.kind, name: w.name };
  const hw = handWritten.get(targetKey(w.namespace, w.kind, w.name));
  if (hw) return { conflict: { ...at, reason: 'HandWrittenGuard', winner: `rolloutguard/${hw.name}` }, guarded: false };
  const self = rank(policy);
  const claimants = allPolicies.filter((p) => policySelects(p, ns, w)).sort((a, b) => rank(a).localeCompare(rank(b)));
  const winner = claimants[0];
  const overlap = (by: PolicyView): Conflict => ({
    ...at,
    reason:
      policy.namespace === undefined && claimants.every((p) => p.namespace === undefined) ? 'OverlappingPolicy' : 'OverlappingSelector',
    winner: claimantRef(by),
  });
  if (winner && rank(winner) !== self) return { conflict: overlap(winner), guarded: false };
  // The winner reports the overlap too, so both claimants show it.
  if (claimants.some((p) => rank(p) !== self)) return { conflict: overlap(policy), guarded: true };
  return { guarded: true };
}

const targetKey = (namespace: string, kind: TargetKind, name: string): string => `${namespace}/${kind}/${name}`;

/** DaemonSets first (compareKinds), then by namespace and name: the order that settles which of two equal names keeps it. */
const workloadOrder = (a: WorkloadRef, b: WorkloadRef): number =>
  compareKinds(a.kind, b.kind) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

/** Plans one policy against the whole (cached) world: `workloads` holds every workload of the kinds it chooses. */
export function planPolicy(
  policy: PolicyView,
  allPolicies: readonly PolicyView[],
  namespaces: readonly NamespaceView[],
  workloads: readonly WorkloadRef[],
  guards: readonly GuardRefView[],
): PolicyPlan {
  const nsByName = new Map(namespaces.map((n) => [n.name, n]));
  const handWritten = new Map<string, GuardRefView>();
  for (const g of guards) if (!g.policy && !g.selectorGuard) handWritten.set(targetKey(g.namespace, g.kind, g.target), g);
  const desired: DesiredGuard[] = [];
  const conflicts: Conflict[] = [];
  const matchedByKind: Partial<Record<TargetKind, number>> = {};
  const taken = new Set<string>();
  for (const w of [...workloads].sort(workloadOrder)) {
    const ns = nsByName.get(w.namespace);
    if (!policySelects(policy, ns, w) || w.ignored) continue;
    matchedByKind[w.kind] = (matchedByKind[w.kind] ?? 0) + 1;
    const claim = claimOf(policy, allPolicies, ns, w, handWritten);
    if (claim.conflict) conflicts.push(claim.conflict);
    if (!claim.guarded) continue;
    let name = generatedGuardName(policy.name, w.name, w.kind);
    if (taken.has(`${w.namespace}/${name}`)) name = disambiguated(policy.name, w.name, w.kind);
    taken.add(`${w.namespace}/${name}`);
    desired.push({ namespace: w.namespace, name, kind: w.kind, target: w.name, spec: guardSpecFor(policy, w.name, w.kind) });
  }
  const keep = new Set(desired.map((d) => `${d.namespace}/${d.name}`));
  const deletions = guards.filter((g) => generatedBy(g, policy) && !keep.has(`${g.namespace}/${g.name}`));
  const order = (a: { namespace: string; name: string; kind: TargetKind }, b: typeof a): number =>
    a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind);
  const matched = Object.values(matchedByKind).reduce((sum, n) => sum + n, 0);
  return { matched, matchedByKind, desired: desired.sort(order), deletions: deletions.sort(order), conflicts: conflicts.sort(order) };
}
