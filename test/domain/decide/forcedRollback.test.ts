/**
 * The forced rollback of a StatefulSet, through decide: after an undo of a stall on `store`, the pod of
 * the undone revision that is not Ready is evicted, and only under every condition forcedRollback.ts
 * lists. Each case runs the same timeline (healthy → stalled → undone) and then one world.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { recordUndoOutcome } from '../../../src/domain/undo.js';
import { recordEviction } from '../../../src/domain/eviction.js';
import { EVICTION_BACKOFF_MS, retryAt } from '../../../src/domain/decide/forcedRollback.js';
import type { NodeView, Observation, PodView, TargetView } from '../../../src/domain/observation.js';
import type { Decision } from '../../../src/domain/decision.js';
import type { GuardSpec, GuardStatus } from '../../../src/api/types.js';
import {
  HASH,
  T0,
  crashLoopPod,
  imagePullPod,
  ordinal,
  pod,
  policy,
  rev,
  run,
  sec,
  store,
  targetObs,
  type Step,
} from '../../support/fixtures.js';

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
const A3 = rev(HASH.A, 3);
const T1 = T0 + sec(60);
const UNDONE = T1 + sec(601);

const onA = (i: number): NodeView => ordinal(i, pod({ hash: HASH.A }));

const healthy = targetObs({ nodes: [0, 1, 2].map(onA), revisions: [A1], target: store() });
const stalled = targetObs({
  nodes: [onA(0), onA(1), ordinal(2, imagePullPod(HASH.B))],
  revisions: [A1, B2],
  target: store({
    generation: 2,
    observedGeneration: 2,
    templateGeneration: '2',
    images: [`registry.example/decoder:${HASH.B}`],
    desired: 3,
    current: 3,
    ready: 2,
    updated: 1,
    available: 2,
  }),
});
/** After the undo: the template is A again (revision 3); `units` as given; observed unless told. */
const undone = (units: NodeView[], o: Partial<TargetView> = {}): Observation =>
  targetObs({
    nodes: units,
    revisions: [A3, B2],
    target: store({
      generation: 3,
      observedGeneration: 3,
      templateGeneration: '3',
      desired: 3,
      current: 3,
      ready: 2,
      updated: 2,
      available: 2,
      ...o,
    }),
  });
const stuck = (i = 2, p: Partial<PodView> = {}): NodeView => ordinal(i, { ...imagePullPod(HASH.B), ...p });

function timeline(last: Observation, o: { onStall?: Partial<GuardSpec['onStall']>; extra?: Step[] } = {}): Decision[] {
  const p = policy({ onStall: { action: 'Undo', ...o.onStall } });
  const steps: Step[] = [
    { obs: healthy, at: T0 },
    { obs: stalled, at: T1 },
    {
      obs: stalled,
      at: T1 + sec(600),
      persist: (d) => recordUndoOutcome(d.status, { kind: 'Applied' }, UNDONE, 1).status,
    },
    { obs: last, at: UNDONE + sec(1) },
    ...(o.extra ?? []),
  ];
  return run(steps, { policy: p });
}

describe('the forced rollback of a StatefulSet', () => {
  it('the template back and observed: evicts the pod left on the undone revision, recording the intent first', () => {
    const ds = timeline(undone([onA(0), onA(1), stuck()]));
    assert.equal(ds[2]!.action?.kind, 'Undo');
    const d = ds[3]!;
    assert.deepEqual(d.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2', forHash: HASH.B });
    assert.equal(d.status.state, 'RollingBack');
    assert.deepEqual(d.status.forcedRollback, {
      forHash: HASH.B,
      evictions: [{ pod: 'store-2', uid: 'uid-2', at: new Date(UNDONE + sec(1)).toISOString(), result: 'Requested', attempts: 1 }],
    });
    assert.match(d.status.message ?? '', /Forced rollback: evicting store-2, not Ready on the undone revision 2 \(bbb222\)/);
  });

  const never: Array<[string, Observation, Partial<GuardSpec['onStall']>?]> = [
    ['before the controller observed the restored template', undone([onA(0), onA(1), stuck()], { observedGeneration: 2 })],
    ['a Ready pod of the undone revision', undone([onA(0), onA(1), ordinal(2, pod({ hash: HASH.B }))])],
    ['a pod of another revision that is not Ready', undone([onA(0), ordinal(1, imagePullPod(HASH.C)), onA(2)])],
    ['under Parallel (the controller replaces it itself)', undone([onA(0), onA(1), stuck()], { waitsOnUnreadyPods: false })],
    ['with forcedRollback off', undone([onA(0), onA(1), stuck()]), { forcedRollback: false }],
    ['while another pod of the undone revision is going (one at a time)', undone([onA(0), stuck(1), stuck(2, { deleting: true })])],
    [
      'a pod whose node is down (the restored revision would wait there too)',
      undone([onA(0), onA(1), { ...stuck(), health: { ready: 'Unknown', reason: 'NodeStatusUnknown' } }]),
    ],
    [
      'a pod its claim keeps from its node (the restored revision would wait for the same claim)',
      undone([onA(0), onA(1), { ...stuck(2, { scheduled: false }), claims: [{ name: 'data-store-2', phase: 'Lost' }] }]),
    ],
  ];
  for (const [name, world, onStall] of never) {
    it(`never ${name}`, () => {
      const d = timeline(world, onStall ? { onStall } : {})[3]!;
      assert.notEqual(d.action?.kind, 'Evict', JSON.stringify(d.action));
      assert.ok(!d.status.forcedRollback?.evictions.length, JSON.stringify(d.status.forcedRollback));
    });
  }

  it('never for a target that does not say its controller waits on unready pods (a DaemonSet: its adapter leaves the flag out)', () => {
    // Absent, not false (the Parallel case above): the DaemonSet adapter's own value is read in
    // test/reconcile/targets/daemonSet.test.ts, and the pass through it in test/reconcile/reconciler.test.ts.
    const world = undone([onA(0), onA(1), stuck()], { kind: 'DaemonSet', name: 'decoder' });
    assert.equal(world.kind, 'Target');
    if (world.kind !== 'Target') return;
    const { waitsOnUnreadyPods: _absent, ...dsTarget } = world.target;
    const d = timeline({ ...world, target: dsTarget })[3]!;
    assert.notEqual(d.action?.kind, 'Evict', JSON.stringify(d.action));
    assert.equal(d.status.forcedRollback, undefined);
  });

  it('the highest ordinal first, then the next once the first is replaced', () => {
    const ds = timeline(undone([onA(0), stuck(1), stuck(2)]), {
      extra: [{ obs: undone([onA(0), stuck(1), onA(2)]), at: UNDONE + sec(20) }],
    });
    assert.equal(ds[3]!.action?.kind === 'Evict' && ds[3]!.action.pod, 'store-2');
    assert.equal(ds[4]!.action?.kind === 'Evict' && ds[4]!.action.pod, 'store-1');
    assert.deepEqual(
      ds[4]!.status.forcedRollback?.evictions.map((e) => e.pod),
      ['store-2', 'store-1'],
    );
  });

  it('a pod evicted once is not evicted again while it is still there', () => {
    const world = undone([onA(0), onA(1), stuck()]);
    const ds = timeline(world, {
      extra: [{ obs: world, at: UNDONE + sec(5) }],
    });
    // The eviction's outcome, as reconcile records it, stands between the two passes.
    const evicted = recordEviction(ds[3]!.status, 'store-2', 'uid-2', { kind: 'Evicted' }, UNDONE + sec(2), 'StatefulSet');
    const again = run([{ obs: world, at: UNDONE + sec(5) }], {
      initial: evicted.status,
      policy: policy({ onStall: { action: 'Undo' } }),
    })[0]!;
    assert.equal(again.action, undefined);
    assert.deepEqual(
      evicted.events.map((e) => e.reason),
      ['PodEvicted'],
    );
  });

  it('a refusal (a PodDisruptionBudget without room) is retried after its backoff, the same pod only', () => {
    const world = undone([onA(0), stuck(1), stuck(2)]);
    const first = timeline(world)[3]!;
    const refusedAt = UNDONE + sec(2);
    const refused = recordEviction(
      first.status,
      'store-2',
      'uid-2',
      { kind: 'Refused', detail: "Cannot evict pod as it would violate the pod's disruption budget." },
      refusedAt,
      'StatefulSet',
    );
    assert.deepEqual(
      refused.events.map((e) => e.reason),
      ['EvictionRefused'],
    );
    assert.equal(refused.retryAfterMs, EVICTION_BACKOFF_MS);
    const p = policy({ onStall: { action: 'Undo' } });
    const early = run([{ obs: world, at: refusedAt + EVICTION_BACKOFF_MS - 1 }], { initial: refused.status, policy: p })[0]!;
    assert.equal(early.action, undefined, 'not before the backoff, and not store-1 meanwhile');
    assert.equal(early.requeueAfterMs !== undefined && early.requeueAfterMs <= EVICTION_BACKOFF_MS, true);
    assert.match(early.status.message ?? '', /evicting store-2 was refused \(Cannot evict pod/);
    const due = run([{ obs: world, at: refusedAt + EVICTION_BACKOFF_MS }], { initial: refused.status, policy: p })[0]!;
    assert.deepEqual(due.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2', forHash: HASH.B });
    assert.equal(due.status.forcedRollback?.evictions[0]?.attempts, 2);
  });

  it('the backoff doubles per refusal, up to five minutes', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const waits = [1, 2, 3, 10].map((attempts) => retryAt({ pod: 'p', uid: 'u', at, result: 'Refused', attempts }) - Date.parse(at));
    assert.deepEqual(waits, [10_000, 20_000, 40_000, 300_000]);
  });

  it('a pod recreated under the same name (another UID) is a new pod: the old record does not hold it back', () => {
    const world = undone([onA(0), onA(1), stuck()]);
    const first = timeline(world)[3]!;
    const evicted = recordEviction(first.status, 'store-2', 'uid-2', { kind: 'Evicted' }, UNDONE + sec(2), 'StatefulSet');
    // Its replacement on the undone revision (a person re-applied it, say) is not Ready either.
    const replacement = stuck();
    replacement.pods[0]!.uid = 'uid-2b';
    const recreated = undone([onA(0), onA(1), replacement]);
    const next = run([{ obs: recreated, at: UNDONE + sec(30) }], {
      initial: evicted.status,
      policy: policy({ onStall: { action: 'Undo' } }),
    })[0]!;
    assert.deepEqual(next.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2b', forHash: HASH.B });
  });

  it('a guard switched to Report after its undo never evicts; its message still names what is stuck', () => {
    const world = undone([onA(0), onA(1), stuck()]);
    const ds = timeline(world, { extra: [{ obs: world, at: UNDONE + sec(1), policy: policy({ onStall: { action: 'Report' } }) }] });
    const after: Decision = ds[4]!;
    assert.notEqual(after.action?.kind, 'Evict');
    const prevStatus: GuardStatus = ds[3]!.status;
    assert.equal(after.status.forcedRollback?.forHash, prevStatus.forcedRollback?.forHash, 'the record is kept');
    assert.match(
      after.status.message ?? '',
      /Reverted to revision 3 \(aaa111\), but store-2 is still on revision 2 \(bbb222\) and not Ready: under OrderedReady the StatefulSet controller will not replace it; kubectl delete pod store-2 -n default finishes the rollback\./,
    );
    assert.doesNotMatch(after.status.message ?? '', /Forced rollback: evicting/, 'no eviction announced');
  });

  it("every field it records is in the CRD's status schema: the API server prunes what the schema lacks", () => {
    type Props = { properties?: Record<string, Props>; items?: Props };
    const crd = parseYaml(readFileSync(new URL('../../../../config/crd/rolloutguards.yaml', import.meta.url), 'utf8')) as {
      spec: { versions: Array<{ schema: { openAPIV3Schema: Props } }> };
    };
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.status!.properties!.forcedRollback!;
    const record = timeline(undone([onA(0), onA(1), stuck()]))[3]!.status.forcedRollback!;
    const refused = recordEviction(
      { forcedRollback: record },
      'store-2',
      'uid-2',
      { kind: 'Refused', detail: 'no room' },
      UNDONE,
      'StatefulSet',
    );
    const full = refused.status.forcedRollback!;
    assert.deepEqual(
      Object.keys(full).filter((k) => !(k in schema.properties!)),
      [],
    );
    const item = schema.properties!.evictions!.items!.properties!;
    assert.deepEqual(
      Object.keys(full.evictions[0]!).filter((k) => !(k in item)),
      [],
    );
  });

  describe("a person's revert that leaves a pod stuck", () => {
    /** Healthy, stalled on B, then reverted by hand to A (revision 3) before the guard's deadline. */
    const reverted = (onStall: Partial<GuardSpec['onStall']>): Decision => {
      const world = undone([onA(0), onA(1), stuck()]);
      return run(
        [
          { obs: healthy, at: T0 },
          { obs: stalled, at: T1 },
          { obs: world, at: T1 + sec(30) },
        ],
        { policy: policy({ onStall }) },
      )[2]!;
    };

    it('an Undo guard finishes it: the stuck pod evicted, no undo of its own', () => {
      const d = reverted({ action: 'Undo' });
      assert.equal(d.status.rollout?.restored, true);
      assert.deepEqual(d.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2', forHash: HASH.B });
      assert.equal(d.status.lastUndo, undefined);
    });

    it('a Report guard says so, names the command, and is not Healthy', () => {
      const d = reverted({ action: 'Report' });
      assert.notEqual(d.action?.kind, 'Evict');
      assert.notEqual(d.status.state, 'Healthy');
      assert.notEqual(d.status.state, 'RolledBack');
      assert.match(
        d.status.message ?? '',
        /Reverted by a person or tool to revision 3 \(aaa111\), but store-2 is still on revision 2 \(bbb222\) and not Ready: under OrderedReady the StatefulSet controller will not replace it; kubectl delete pod store-2 -n default finishes the rollback\./,
      );
    });

    it('once the revert makes no progress, the stuck pod is named as what holds it, never the control plane, and nothing is undone', () => {
      const world = undone([onA(0), onA(1), stuck()]);
      const d = run(
        [
          { obs: healthy, at: T0 },
          { obs: stalled, at: T1 },
          { obs: world, at: T1 + sec(30) },
          { obs: world, at: T1 + sec(30) + sec(600) },
        ],
        { policy: policy({ onStall: { action: 'Report' } }) },
      )[3]!;
      assert.equal(d.status.state, 'Stalled');
      assert.equal(d.status.cause, 'ImagePullFailure', d.status.message);
      assert.equal(d.status.owner, 'Revision');
      assert.match(
        d.status.message ?? '',
        /the StatefulSet controller waits for store-2 ImagePullBackOff .*, left on the undone revision, to become Ready before it replaces it/,
      );
      assert.match(d.status.message ?? '', /store-2 never became Ready on the undone revision/);
      assert.doesNotMatch(d.status.message ?? '', /ControllerNotActing|kube-controller-manager slow or down/);
      assert.equal(d.action, undefined, 'no undo of a revert, whatever the owner');
      assert.equal(d.status.lastUndo, undefined);
    });

    it('an Undo guard with forcedRollback off says the same, and evicts nothing', () => {
      const d = reverted({ action: 'Undo', forcedRollback: false });
      assert.notEqual(d.action?.kind, 'Evict');
      assert.match(d.status.message ?? '', /store-2 is still on revision 2 \(bbb222\)/);
    });
  });

  it('a forward rollout held by a pod failing on the revision it ran before: named, owner Node, never the control plane, no undo', () => {
    const sick = ordinal(2, crashLoopPod(HASH.A));
    const before = targetObs({ nodes: [onA(0), onA(1), sick], revisions: [A1], target: store({ ready: 2, available: 2 }) });
    // The controller waits for store-2 before it updates anything: no pod of B exists.
    const held = targetObs({
      nodes: [onA(0), onA(1), sick],
      revisions: [A1, B2],
      target: store({
        generation: 2,
        observedGeneration: 2,
        templateGeneration: '2',
        desired: 3,
        current: 3,
        ready: 2,
        updated: 0,
        available: 2,
      }),
    });
    const d = run(
      [
        { obs: before, at: T0 },
        { obs: held, at: T1 },
        { obs: held, at: T1 + sec(600) },
      ],
      { policy: policy({ onStall: { action: 'Undo' } }) },
    )[2]!;
    assert.equal(d.status.state, 'Stalled');
    assert.equal(d.status.cause, 'CrashLoop', d.status.message);
    assert.equal(d.status.owner, 'Node');
    assert.match(
      d.status.message ?? '',
      /the StatefulSet controller waits for store-2 CrashLoopBackOff .*, not Ready on the revision before/,
    );
    assert.match(d.status.message ?? '', /the new revision is not what holds the rollout, and an undo would not help/);
    assert.notEqual(d.action?.kind, 'Undo');
    assert.notEqual(d.action?.kind, 'Evict');
    assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
  });
});
