/**
 * Words for the kind: every message a StatefulSet guard can produce names the StatefulSet, its pods and
 * `kubectl … sts`, never a DaemonSet's words. The messages are rendered three ways: the sentence
 * builders for every owner and cause, decide over a corpus of StatefulSet timelines (each failure a pod
 * can show, Report and Undo, a stall, a shrink, a leftover, an undo and its forced rollback, a controller
 * that does not observe or does not act, a node that dies), and the outcome records the reconciler folds
 * in (undo and eviction). Each timeline's status message, condition messages, Event notes and undo
 * records are read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KIND_WORDS } from '../../src/domain/kindWords.js';
import { attributionSentence, stallSentence } from '../../src/domain/messages.js';
import { recordEviction } from '../../src/domain/eviction.js';
import { recordUndoOutcome, type UndoOutcome } from '../../src/domain/undo.js';
import type { Decision } from '../../src/domain/decision.js';
import type { NodeView, Observation, PodView, TargetView } from '../../src/domain/observation.js';
import type { FaultOwner, GuardSpec, GuardStatus } from '../../src/api/types.js';
import { DAEMONSET_WORDS } from '../support/kindWords.js';
import {
  CAUSE_CLASSES,
  HASH,
  T0,
  crashLoopPod,
  deletingPod,
  dsView,
  imagePullPod,
  notReadyPod,
  pod,
  policy,
  rev,
  run,
  sec,
  targetObs,
  unscheduledPod,
  unschedulablePod,
  waitingOutMinReadyPod,
  type Step,
  ordinal,
  store,
} from '../support/fixtures.js';

const STORE: TargetView = dsView({ kind: 'StatefulSet', name: 'store', waitsOnUnreadyPods: true });
const OWNERS: Array<FaultOwner | ''> = ['Revision', 'Node', 'ControlPlane', 'ConfiguredWait', 'Configuration', 'Unknown', ''];

/** Every sentence a decision carries for people. */
function messagesOf(s: GuardStatus, events: Decision['events'] = []): string[] {
  return [
    s.message ?? '',
    ...(s.conditions ?? []).map((c) => c.message ?? ''),
    ...events.map((e) => e.note),
    s.undoSkipped?.message ?? '',
    s.lastUndo?.message ?? '',
    s.undoPlan?.dryRunMessage ?? '',
  ].filter((m) => m !== '');
}

function assertNoDaemonSetWords(messages: readonly string[], where: string): void {
  for (const m of messages) assert.doesNotMatch(m, DAEMONSET_WORDS, `${where}: ${m}`);
}

describe("a StatefulSet's words", () => {
  it('the kind words themselves', () => {
    const w = KIND_WORDS.StatefulSet;
    assertNoDaemonSetWords(
      [w.short, w.unit, w.desired, w.notUpdated, w.notAvailable, w.readyNotAvailable, w.fewerTargeted, w.noneTargeted, w.columns(STORE)],
      'KIND_WORDS',
    );
    assert.equal(w.short, 'sts');
    assert.equal(w.unit, 'pod');
  });

  it('every attribution and stall sentence, for every owner and cause, blocked or held', () => {
    const blocked = [
      {
        node: 'store-2',
        host: 'node-a',
        pod: 'store-2',
        hash: HASH.B,
        reason: 'ImagePullBackOff',
        message: 'Back-off',
        owner: 'Revision' as const,
      },
    ];
    const empty = [
      {
        node: 'store-1',
        host: 'node-b',
        reason: 'PodTerminating',
        message: 'node is Unknown (Kubelet stopped posting node status.)',
        owner: 'Node' as const,
      },
    ];
    const left = [{ node: 'node-c', reason: 'untolerated taint' }];
    const rendered: string[] = [];
    for (const owner of OWNERS)
      for (const cause of CAUSE_CLASSES)
        for (const units of [
          { blocked: [], empty: [] },
          { blocked, empty: [] },
          { blocked: [], empty },
        ]) {
          const mine = {
            blocked: units.blocked.map((b) => ({ ...b, owner: owner || 'Unknown' })),
            empty: units.empty.map((e) => ({ ...e, owner: owner || 'Unknown' })),
          };
          for (const held of [undefined, ...(['undone', 'superseded', 'before'] as const).map((on) => ({ pods: blocked, on }))]) {
            const common = { owner, cause, ...mine, target: STORE, left, ...(held ? { held } : {}) };
            rendered.push(attributionSentence(common), attributionSentence({ ...common, rollback: true }));
            rendered.push(
              stallSentence({
                ...common,
                verb: 'has made no progress',
                to: { revision: 2, hash: HASH.B },
                idleMs: sec(600),
                gens: [
                  { revision: 1, hash: HASH.A, nodes: 2, ready: 2, images: [] },
                  { revision: 2, hash: HASH.B, nodes: 1, ready: 0, images: [] },
                ],
                desiredAtStart: 4,
                refusal: 'pods "store-2" is forbidden: error looking up service account default/missing',
              }),
            );
          }
        }
    assertNoDaemonSetWords(rendered, 'sentences');
  });

  it('the outcome records of an undo and of an eviction', () => {
    const pending: GuardStatus = {
      state: 'Stalled',
      lastUndo: {
        at: new Date(T0).toISOString(),
        fromHash: HASH.B,
        fromRevision: 2,
        toHash: HASH.A,
        toRevision: 1,
        toRevisionName: 'store-a',
        result: 'Pending',
        message: 'undo decided',
      },
      forcedRollback: {
        forHash: HASH.B,
        evictions: [{ pod: 'store-2', uid: 'u', at: new Date(T0).toISOString(), result: 'Requested', attempts: 1 }],
      },
    };
    const outcomes: UndoOutcome[] = [
      { kind: 'Applied' },
      { kind: 'AlreadyAtTarget' },
      { kind: 'TemplateChanged', detail: 'generation moved' },
      { kind: 'OptedOut' },
      { kind: 'NotUndone', detail: 'owned' },
      { kind: 'Failed', detail: 'forbidden' },
    ];
    const rendered: string[] = [];
    for (const o of outcomes) {
      const r = recordUndoOutcome(pending, o, T0 + sec(1), 1, 'StatefulSet');
      rendered.push(...messagesOf(r.status, r.events));
    }
    for (const o of [{ kind: 'Evicted' }, { kind: 'Refused', detail: 'budget' }, { kind: 'Gone' }] as const) {
      const r = recordEviction(pending, 'store-2', 'u', o, T0 + sec(1), 'StatefulSet');
      rendered.push(...messagesOf(r.status, r.events));
    }
    assert.ok(rendered.length > 6);
    assertNoDaemonSetWords(rendered, 'outcome records');
  });
});

// --- decide over a corpus of StatefulSet timelines -------------------------------------------------------

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
const C3 = rev(HASH.C, 3);
const A3 = rev(HASH.A, 3);
const PUSH = T0 + sec(60);
/** Ordinal `i` of `store`, on node-i. */
const onNode = (i: number, p: PodView, health?: NodeView['health']): NodeView =>
  ordinal(i, p, { host: `node-${i}`, ...(health ? { health } : {}) });
const onA = (i: number): NodeView => onNode(i, pod({ hash: HASH.A }));
const at = (generation: number, observed: number, units: NodeView[], revisions = [A1, B2], o: Partial<TargetView> = {}): Observation =>
  targetObs({
    nodes: units,
    revisions,
    target: store({
      generation,
      observedGeneration: observed,
      templateGeneration: String(generation),
      desired: units.length,
      current: units.length,
      ready: units.filter((u) => u.pods.some((p) => p.ready)).length,
      available: units.filter((u) => u.pods.some((p) => p.available)).length,
      // On the newest revision: the update revision's pods.
      updated: units.filter((u) => u.pods.some((p) => p.hash === [...revisions].sort((x, y) => y.revision - x.revision)[0]!.hash)).length,
      ...o,
    }),
  });
const healthy = at(1, 1, [0, 1, 2].map(onA), [A1]);

const FAILURES: Record<string, PodView> = {
  imagePull: imagePullPod(HASH.B),
  crashLoop: crashLoopPod(HASH.B),
  notReady: notReadyPod(HASH.B),
  unschedulable: unschedulablePod(HASH.B, '0/3 nodes are available: 3 Insufficient cpu.'),
  unscheduled: unscheduledPod(HASH.B),
  minReady: waitingOutMinReadyPod(HASH.B, PUSH),
  oom: { ...crashLoopPod(HASH.B), lastTermination: { container: 'store', reason: 'OOMKilled', exitCode: 137 } },
  mount: {
    ...pod({ hash: HASH.B, phase: 'Pending', waitingReason: 'ContainerCreating', ready: false }),
    warning: { reason: 'FailedMount', message: 'MountVolume.SetUp failed', at: new Date(PUSH).toISOString() },
  },
};

/** Named timelines: each a list of worlds, one pass every `step` seconds from the push. */
function corpus(): Array<[string, Observation[]]> {
  const out: Array<[string, Observation[]]> = [];
  for (const [name, failing] of Object.entries(FAILURES)) {
    out.push([`store-2 ${name}`, [at(2, 2, [onA(0), onA(1), onNode(2, failing)])]]);
    out.push([
      `store-2 ${name}, then a third revision pushed`,
      [at(2, 2, [onA(0), onA(1), onNode(2, failing)]), at(3, 3, [onA(0), onA(1), onNode(2, failing)], [A1, B2, C3], { updated: 0 })],
    ]);
  }
  const stuck = onNode(2, imagePullPod(HASH.B));
  out.push(['the controller not observing', [at(2, 1, [0, 1, 2].map(onA), [A1])]]);
  out.push([
    'the controller not observing a third revision',
    [at(2, 2, [onA(0), onA(1), onNode(2, pod({ hash: HASH.B }))]), at(3, 2, [onA(0), onA(1), onNode(2, pod({ hash: HASH.B }))])],
  ]);
  out.push(['the controller not acting', [at(2, 2, [0, 1, 2].map(onA), [A1, B2], { updated: 0 })]]);
  out.push([
    'a node dying under store-2',
    [at(2, 2, [onA(0), onA(1), onNode(2, deletingPod(HASH.A, PUSH), { ready: 'Unknown', reason: 'NodeStatusUnknown' })])],
  ]);
  out.push(['scaled down mid-rollout', [at(2, 2, [onA(0), stuck]), at(2, 2, [onA(0)], [A1, B2], { desired: 1 })]]);
  out.push(['scaled to zero', [at(2, 2, [], [A1, B2], { desired: 0 })]]);
  out.push(['at a partition', [at(2, 2, [onA(0), onA(1), onNode(2, pod({ hash: HASH.B }))], [A1, B2], { partition: 2 })]]);
  out.push(['a revert left stuck', [at(2, 2, [onA(0), onA(1), stuck]), at(3, 3, [onA(0), onA(1), stuck], [A3, B2], { updated: 2 })]]);
  out.push(['store-2 failing before the rollout', [at(2, 2, [onA(0), onA(1), onNode(2, crashLoopPod(HASH.A))], [A1, B2], { updated: 0 })]]);
  out.push([
    'a refusal only the StatefulSet says',
    [
      at(2, 2, [0, 1, 2].map(onA), [A1, B2], {
        updated: 0,
        warning: { reason: 'FailedCreate', message: 'pods "store-2" is forbidden: exceeded quota: pods', at: new Date(PUSH).toISOString() },
      }),
    ],
  ]);
  out.push([
    'a clean rollout',
    [
      at(2, 2, [onA(0), onA(1), onNode(2, pod({ hash: HASH.B }))]),
      at(
        2,
        2,
        [0, 1, 2].map((i) => onNode(i, pod({ hash: HASH.B }))),
      ),
    ],
  ]);
  return out;
}

describe("decide's messages over StatefulSet timelines", () => {
  const actions: Array<Partial<GuardSpec['onStall']>> = [
    { action: 'Report' },
    { action: 'Undo' },
    { action: 'Undo', forcedRollback: false },
  ];
  for (const [name, worlds] of corpus()) {
    it(name, () => {
      for (const onStall of actions) {
        const p = policy({
          targetRef: { kind: 'StatefulSet', name: 'store' },
          suspectAfterSeconds: 6,
          progressDeadlineSeconds: 15,
          onStall,
        });
        const steps: Step[] = [{ obs: healthy, at: T0 }];
        let t = PUSH;
        for (const w of worlds) for (const gap of [0, 3, 7, 16, 40]) steps.push({ obs: w, at: (t += sec(gap)) });
        // Between a decided undo and the next pass, the reconciler records its outcome.
        const withUndo = steps.map((s) => ({
          ...s,
          persist: (d: Decision) =>
            d.action?.kind === 'Undo' ? recordUndoOutcome(d.status, { kind: 'Applied' }, s.at + 500, 1, 'StatefulSet').status : d.status,
        }));
        const decisions = run(withUndo, { policy: p });
        const rendered = decisions.flatMap((d) => messagesOf(d.status, d.events));
        assert.ok(rendered.length >= decisions.length, 'every pass says something');
        assertNoDaemonSetWords(rendered, `${name}, ${JSON.stringify(onStall)}`);
      }
    });
  }

  it('a guard whose StatefulSet is missing, suspended, or being deleted', () => {
    const p = policy({ targetRef: { kind: 'StatefulSet', name: 'store' } });
    const worlds: Observation[] = [{ kind: 'TargetMissing', targetName: 'store' }];
    const decisions = worlds.flatMap((w) => [
      ...run([{ obs: w, at: T0 }], { policy: p }),
      ...run([{ obs: w, at: T0 }], { policy: policy({ targetRef: { kind: 'StatefulSet', name: 'store' }, suspend: true }) }),
    ]);
    assertNoDaemonSetWords(
      decisions.flatMap((d) => messagesOf(d.status, d.events)),
      'settle',
    );
  });
});
