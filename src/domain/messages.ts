/**
 * Human sentences for `status.message`, condition messages and Event notes. Each names the nodes, the
 * revisions and the kubectl column that shows the problem, so the reader can check it without us.
 */
import { causeHint } from './causes.js';
import { wordsOf } from './kindWords.js';
import { DEFAULT_KIND, KINDS, podControllerKind } from '../api/kinds.js';
import type { BlockedNode, CauseClass, EmptyNode, FaultOwner, GenerationStatus, LeftNode, RevisionRef, TargetKind } from '../api/types.js';
import type { TargetView } from './observation.js';
import type { Held, HeldOn } from './decide/pass.js';

/**
 * `n` of a target's units as sentences count them: a DaemonSet's nodes, a StatefulSet's pods (one per
 * ordinal). "3 nodes", "1 pod".
 */
export function units(kind: TargetKind, n: number): string {
  return `${n} ${wordsOf(kind).unit}${n === 1 ? '' : 's'}`;
}

/** The unit word alone: "node(s)" or "pod(s)". */
export function unitWord(kind: TargetKind, plural = true): string {
  return `${wordsOf(kind).unit}${plural ? 's' : ''}`;
}

/**
 * For a StatefulSet whose partition holds ordinals on another revision than the one it updates to
 * (TargetView.partition): "1 pod on revision 2 (…), 2 pods on revision 1 (…), 3/3 available; it waits at
 * partition 2: ordinals 0–1 keep their revision until the partition is lowered". A partition at replicas
 * holds every ordinal, and the rollout has updated none yet. Undefined for anything else.
 */
export function heldAtPartition(target: TargetView, gens: readonly GenerationStatus[]): string | undefined {
  const p = target.partition;
  if (p === undefined || p <= 0) return undefined;
  const held = p === 1 ? 'ordinal 0 keeps its' : `ordinals 0–${p - 1} keep their`;
  return `${describeGenerations(gens, target.kind)}, ${target.available}/${target.desired} available; it waits at partition ${p}: ${held} revision until the partition is lowered`;
}

/** "revision 3 (5d8f9c7b4)" or "hash 5d8f9c7b4" when the number is unknown. */
export function fmtRev(r: RevisionRef | undefined): string {
  if (!r) return 'an unknown revision';
  return r.revision !== undefined ? `revision ${r.revision} (${r.hash})` : `hash ${r.hash}`;
}

/**
 * ", the revision 1 the undo restored, renumbered by its controller": a kind whose history is ReplicaSets
 * gives the one an undo brings back the next revision number, as `kubectl rollout undo` does, and the
 * undo's record keeps the number it had when undone. Empty when the number did not move.
 */
export function renumbered(u: { toHash: string; toRevision?: number }, now: RevisionRef): string {
  return u.toHash === now.hash && u.toRevision !== undefined && now.revision !== undefined && u.toRevision !== now.revision
    ? `, the revision ${u.toRevision} the undo restored, renumbered by its controller`
    : '';
}

/** "90s", "10m", "1h5m". */
export function fmtDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ''}`;
}

/** "a, b, c and 2 more". */
export function list(items: readonly string[], max = 3): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** "node-3 ImagePullBackOff (Back-off pulling image …)". */
export function describeBlocked(blocked: readonly BlockedNode[], empty: readonly EmptyNode[]): string {
  const parts = [
    ...blocked.map((b) => `${b.node} ${b.reason}${b.message ? ` (${truncate(b.message, 120)})` : ''}`),
    ...empty.map((e) => `${e.node} empty (${e.message})`),
  ];
  return list(parts);
}

/** "node-3 (untolerated taint gpu=x:NoExecute)". */
export function describeLeft(left: readonly LeftNode[]): string {
  return list(left.map((l) => `${l.node} (${l.reason})`));
}

/** "2 nodes on revision 1, 1 node on revision 2" (pods, for a StatefulSet). */
export function describeGenerations(gens: readonly GenerationStatus[], kind: TargetKind = DEFAULT_KIND): string {
  return gens.map((g) => `${units(kind, g.nodes)} on ${fmtRev(g)}`).join(', ');
}

/** The kubectl get columns of the target as a user sees them. */
export function dsColumns(target: TargetView): string {
  return wordsOf(target.kind).columns(target);
}

/**
 * Whose fault a stall is and what to do, in plain words: "node-2 is Unknown (Kubelet stopped posting
 * node status.): the rollout waits for it; an undo would not help".
 */
export function attributionSentence(args: {
  owner: FaultOwner | '';
  cause: CauseClass | '';
  blocked: readonly BlockedNode[];
  empty: readonly EmptyNode[];
  target: TargetView;
  left?: readonly LeftNode[];
  /** The rollout is the guard's own undo converging: it is never undone in turn. */
  rollback?: boolean;
  /** The pods of another revision the controller waits on (Attribution.held). */
  held?: Readonly<Held>;
}): string {
  const held = args.held?.pods ?? [];
  if (held.length > 0 && args.blocked.length + args.empty.length === 0) {
    const one = held.length === 1;
    const names = list(held.map((x) => x.node));
    const pods = held.map((x) => x.pod ?? x.node).join(' ');
    if (args.held?.on === 'superseded')
      return `${names} ${one ? 'is' : 'are'} left not Ready on a revision this rollout superseded, and under OrderedReady the ${args.target.kind} controller waits for ${one ? 'it' : 'them'} and never replaces ${one ? 'it' : 'them'}: the new revision has not been tried yet. Deleting ${one ? 'it' : 'them'} lets the rollout go on (kubectl delete pod ${pods} -n ${args.target.namespace}); an undo would not help while ${one ? 'it stays' : 'they stay'}.`;
    if (args.held?.on === 'undone')
      return `${names} never became Ready on the undone revision, and under OrderedReady the ${args.target.kind} controller does not replace a pod that is not Ready: the rollback waits for ${one ? 'it' : 'them'} until ${one ? 'it is' : 'they are'} deleted.`;
    return `${names} ${one ? 'was' : 'were'} not Ready on the revision ${one ? 'it' : 'they'} ran before the rollout reached ${one ? 'it' : 'them'}, and under OrderedReady the ${args.target.kind} controller updates nothing until ${one ? 'it is' : 'they are'} Ready: the new revision is not what holds the rollout, and an undo would not help (kubectl describe pod ${pods}).`;
  }
  const mine = [...args.blocked, ...args.empty].filter((x) => x.owner === args.owner);
  const names = list(mine.map((x) => x.node));
  if (args.rollback && args.owner === 'Revision') {
    return `The restored revision fails on ${names || 'the nodes'}: the guard never undoes its own undo; fix forward.`;
  }
  switch (args.owner) {
    case 'Revision':
      if (mine.length === 0 && args.cause === 'AdmissionRefused')
        return 'The API server refuses the new template: the revision is at fault, and an undo would restore the previous one.';
      if (mine.length === 0 && args.cause === 'QuotaExceeded')
        return 'The new revision asks for more than the namespace quota allows: the revision is at fault, and an undo would restore the previous one.';
      if (mine.length === 0)
        return 'The new template is at fault (it no longer selects or tolerates nodes it ran on): an undo restores them.';
      if (mine[0]?.comparison)
        return `The new revision is at fault on ${names}: ${mine[0].comparison}. An undo would restore the previous one.`;
      if (KINDS[args.target.kind].units !== 'nodes')
        return `The new revision itself fails on ${names}, on a Ready node: the revision is at fault, and an undo would restore the previous one.`;
      return `The new revision itself fails on Ready node${mine.length === 1 ? '' : 's'} ${names}: the revision is at fault, and an undo would restore the previous one.`;
    case 'Node': {
      if (mine.length === 0)
        return `${describeLeft(args.left ?? [])} changed during the rollout (a taint or label on the node): the nodes, not the revision, are at fault; an undo would not help.`;
      const first = mine[0]!;
      if (first.comparison)
        return `${names}: ${first.comparison}. The rollout waits for ${mine.length === 1 ? 'the node' : 'the nodes'}; an undo would not help (kubectl describe node ${first.host ?? first.node}).`;
      // "node is Unknown (Kubelet stopped posting node status.)": the node's own words, without what the
      // pod or the targets add after the semicolon.
      const what = truncate(first.message.split('; ')[0] ?? first.message, 160);
      const one = mine.length === 1;
      return `${names}: ${one ? what : `${what.replace(/^node is/, 'nodes are')}`}. The rollout waits for ${one ? 'it' : 'them'}; an undo would not help. Repair or remove ${one ? 'the node' : 'the nodes'} (kubectl describe node ${first.host ?? first.node}).${stuckOrdinals(args.target, mine)}`;
    }
    case 'ControlPlane':
      if (args.cause === 'ControllerNotObserving')
        return 'The control plane is at fault: is kube-controller-manager running and leading? The guard waits for it; an undo would not help, nothing would carry it out.';
      if (args.cause === 'SchedulerNotActing')
        return `No scheduler has looked at the new pod${mine.length === 1 ? '' : 's'} on ${names}: is kube-scheduler running? An undo would not help.`;
      return `No ${unitWord(args.target.kind, false)} is blocked: the remaining ${unitWord(args.target.kind)} still run the old revision and wait for the ${args.target.kind} controller to replace their pods (kube-controller-manager slow or down). An undo would not help.`;
    case 'Configuration':
      if (mine[0]?.comparison) return `${names}: ${mine[0].comparison}. An undo would not help.`;
      if (mine.length === 0)
        return `The configuration around the ${args.target.kind}, not the revision, refuses the new pods (see above). An undo would not help.`;
      return `${names}: the namespace's configuration refuses the new pod (${truncate(mine[0]!.message, 200)}). An undo would not help: the old revision needs the same room.`;
    case 'ConfiguredWait':
      return `${names} only wait${mine.length === 1 ? 's' : ''} out a configured delay (minReadySeconds ${args.target.minReadySeconds}, or a termination grace period): not a stall.`;
    case 'Unknown':
      return `Nothing the API states explains ${names || 'it'} yet: the fault is not attributed, so no undo is justified.`;
    default:
      return '';
  }
}

/**
 * A StatefulSet's ordinals whose old pod is stuck Terminating on a node that is down: its controller
 * never creates an ordinal's pod anew while the old one exists, however long the node stays down.
 */
function stuckOrdinals(target: TargetView, mine: ReadonlyArray<BlockedNode | EmptyNode>): string {
  if (KINDS[target.kind].units !== 'ordinals') return '';
  const stuck = mine.filter((x) => x.reason === 'Terminating').map((x) => x.node);
  if (stuck.length === 0) return '';
  const pods = stuck.join(' ');
  return ` The StatefulSet controller never creates ${list(stuck)} anew while the old pod exists: once the node is known to be gone for good, delete its Node object, or force-delete the pod (kubectl delete pod ${pods} --force --grace-period=0).`;
}

/**
 * The commands that undo a rollout by hand, one per step: `kubectl rollout undo`, then, for a kind whose
 * controller waits on them (a StatefulSet under OrderedReady), the deletion of the pods in `stuck`.
 */
export function handUndoSteps(
  target: Pick<TargetView, 'kind' | 'name' | 'namespace'>,
  plan: { toRevision?: number },
  stuck: ReadonlyArray<Pick<BlockedNode, 'pod'>>,
): string[] {
  const ns = `-n ${target.namespace}`;
  const to = plan.toRevision !== undefined ? ` --to-revision=${plan.toRevision}` : '';
  const undo = `kubectl rollout undo ${target.kind.toLowerCase()}/${target.name} ${ns}${to}`;
  const pods = stuck.map((b) => b.pod).filter((p): p is string => p !== undefined);
  return pods.length === 0 ? [undo] : [undo, `kubectl delete pod ${pods.join(' ')} ${ns}`];
}

/**
 * The same steps in one sentence, as a message says them: `kubectl rollout undo`, then the forced
 * rollback of each pod in `stuck`, which an OrderedReady controller waits on forever after the revert.
 */
export function undoCommands(
  target: Pick<TargetView, 'kind' | 'name' | 'namespace'>,
  plan: { toRevision?: number },
  stuck: ReadonlyArray<Pick<BlockedNode, 'pod'>>,
): string {
  const [undo, deletion] = handUndoSteps(target, plan, stuck);
  if (deletion === undefined) return undo!;
  return `${undo}, then ${deletion} (the ${target.kind} controller does not replace a pod that never became Ready, even after the revert)`;
}

/** Where the pods a controller waits on were left, as the stall sentence says it. */
const HELD_WHERE: Record<HeldOn, string> = {
  undone: 'left on the undone revision',
  superseded: 'left on a superseded revision',
  before: 'not Ready on the revision before',
};

/** One sentence on why a rollout does not complete. */
export function stallSentence(args: {
  verb: string;
  to: RevisionRef;
  cause: CauseClass;
  owner?: FaultOwner | '';
  rollback?: boolean;
  /** The API server's refusal of the new pods when no node shows it (see attribute.ts). */
  refusal?: string;
  /** The pods of another revision the controller waits on (Attribution.held). */
  held?: Readonly<Held>;
  idleMs: number;
  blocked: readonly BlockedNode[];
  empty: readonly EmptyNode[];
  left: readonly LeftNode[];
  gens: readonly GenerationStatus[];
  target: TargetView;
  desiredAtStart: number;
}): string {
  const head = `Rollout to ${fmtRev(args.to)} ${args.verb} for ${fmtDuration(args.idleMs)}`;
  let why: string;
  if (args.cause === 'TargetShrank' || args.cause === 'NoNodesMatched') {
    why = `${wordsOf(args.target.kind).desired} dropped from ${args.desiredAtStart} to ${args.target.desired}`;
    if (args.left.length > 0) why += `: ${describeLeft(args.left)} left the targets`;
    if (args.blocked.length + args.empty.length > 0) why += `; ${describeBlocked(args.blocked, args.empty)}`;
  } else if (args.blocked.length + args.empty.length > 0) {
    why = describeBlocked(args.blocked, args.empty);
    // Dead nodes leave the targets too (unreachable:NoSchedule): the drop is said, after what blocks.
    if (args.left.length > 0 && args.target.desired < args.desiredAtStart)
      why += `; ${wordsOf(args.target.kind).desired} dropped from ${args.desiredAtStart} to ${args.target.desired}: ${describeLeft(args.left)} left the targets`;
  } else if (args.held?.pods.length) {
    const them = args.held.pods.length === 1 ? 'it' : 'them';
    const where = HELD_WHERE[args.held.on];
    why = `the ${args.target.kind} controller waits for ${describeBlocked(args.held.pods, [])}, ${where}, to become Ready before it replaces ${them}`;
  } else if (args.refusal) {
    // The controller that creates the pods says so: a Deployment's ReplicaSet controller, on its ReplicaSet.
    why = `no ${unitWord(args.target.kind, false)} is blocked, but the ${podControllerKind(args.target.kind)} controller cannot create the new pods: ${args.refusal}`;
  } else {
    why = `no ${unitWord(args.target.kind, false)} is blocked, but the ${args.target.kind} controller reports no progress`;
  }
  const split = args.gens.length > 1 ? `; ${describeGenerations(args.gens, args.target.kind)}` : '';
  const base = `${head}: ${why}${split}. Cause ${args.cause}: ${causeHint(args.cause, args.target.kind)}; ${dsColumns(args.target)}.`;
  if (!args.owner) return base;
  return `${base} ${attributionSentence({ owner: args.owner, cause: args.cause, blocked: args.blocked, empty: args.empty, target: args.target, left: args.left, rollback: args.rollback === true, ...(args.held ? { held: args.held } : {}) })}`;
}

/** Event notes are limited to 1 kB by the API server. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
