/**
 * Human sentences for `status.message`, condition messages and Event notes. Each names the nodes, the
 * revisions and the kubectl column that shows the problem, so the reader can check it without us.
 */
import { CAUSE_HINT } from './causes.js';
import type { BlockedNode, CauseClass, DaemonSetView, EmptyNode, GenerationStatus, LeftNode, RevisionRef } from './types.js';

/** "revision 3 (5d8f9c7b4)" or "hash 5d8f9c7b4" when the number is unknown. */
export function fmtRev(r: RevisionRef | undefined): string {
  if (!r) return 'an unknown revision';
  return r.revision !== undefined ? `revision ${r.revision} (${r.hash})` : `hash ${r.hash}`;
}

/** "90s", "10m", "1h5m". */
export function fmtDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ''}`;
}

function list(items: string[], max = 3): string {
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

/** "2 nodes on revision 1, 1 node on revision 2". */
export function describeGenerations(gens: readonly GenerationStatus[]): string {
  return gens.map((g) => `${g.nodes} node${g.nodes === 1 ? '' : 's'} on ${fmtRev(g)}`).join(', ');
}

/** The kubectl get ds columns as a user sees them. */
export function dsColumns(ds: DaemonSetView): string {
  return `kubectl get ds shows DESIRED ${ds.desired}, READY ${ds.ready}, UP-TO-DATE ${ds.updated}, AVAILABLE ${ds.available}`;
}

/** One sentence on why a rollout does not complete. */
export function stallSentence(args: {
  verb: string;
  to: RevisionRef;
  cause: CauseClass;
  idleMs: number;
  blocked: readonly BlockedNode[];
  empty: readonly EmptyNode[];
  left: readonly LeftNode[];
  gens: readonly GenerationStatus[];
  ds: DaemonSetView;
  desiredAtStart: number;
}): string {
  const head = `Rollout to ${fmtRev(args.to)} ${args.verb} for ${fmtDuration(args.idleMs)}`;
  let why: string;
  if (args.cause === 'TargetShrank' || args.cause === 'NoNodesMatched') {
    why = `DESIRED dropped from ${args.desiredAtStart} to ${args.ds.desired}`;
    if (args.left.length > 0) why += `: ${describeLeft(args.left)} left the targets`;
  } else if (args.blocked.length + args.empty.length > 0) {
    why = describeBlocked(args.blocked, args.empty);
  } else {
    why = 'no node is blocked, but the DaemonSet controller reports no progress';
  }
  const split = args.gens.length > 1 ? `; ${describeGenerations(args.gens)}` : '';
  return `${head}: ${why}${split}. Cause ${args.cause}: ${CAUSE_HINT[args.cause]}; ${dsColumns(args.ds)}.`;
}

/** Event notes are limited to 1 kB by the API server. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
