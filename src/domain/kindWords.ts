/**
 * The words a message uses for each kind of target: what kubectl calls it, what one unit of its rollout
 * is, and where kubectl shows each way its rollout falls short. A message takes its words from here,
 * never from a comparison of kind names, so a StatefulSet's guard speaks of the StatefulSet, its pods and
 * `kubectl … sts`. The words themselves are part of each kind's descriptor (api/kinds.ts), so a kind added
 * to TARGET_KINDS does not compile until its words are written.
 */
import { mapKinds, type KindMessageWords } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';

export interface KindWords extends KindMessageWords {
  /** kubectl's short name for the resource: `kubectl get ds`. */
  short: string;
  /**
   * What `kubectl describe` shows the Warnings of the controller creating its pods on (FailedCreate): the
   * workload itself (`ds`), or, for a kind whose pods a ReplicaSet creates, its ReplicaSets (`rs`).
   */
  warnedOn: string;
}

/** Every kind's words, from its descriptor. */
export const KIND_WORDS: Readonly<Record<TargetKind, KindWords>> = mapKinds((d) => ({
  short: d.short,
  warnedOn: d.podOwner === 'replicaSet' ? 'rs' : d.short,
  ...d.words,
}));

/** The words for `kind`. */
export const wordsOf = (kind: TargetKind): KindWords => KIND_WORDS[kind];
