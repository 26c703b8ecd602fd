/**
 * The plan phase (decide/plan.ts, undoChecks.ts) for a kind the guard does not undo yet (a Deployment,
 * KindDescriptor.undo.unsupported): an Undo guard's stall blamed on the revision is refused, said in
 * status.undoSkipped (UndoNotSupported, the kind's own words naming the command), in the message and in
 * one UndoSkipped Event, never silently; no write, dry run or admission comparison is planned. A stall
 * that is not the revision's still says whose it is. The DaemonSet's undo, the control, goes on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/domain/decision.js';
import type { Observation } from '../../../src/domain/observation.js';
import { HASH, T0, deadKubelet, imagePullPod, node, policy, rev, run, sec, targetObs, withHealth } from '../../support/fixtures.js';
import { OLD_PODS, podUnit, rollingToB, settledOnA } from '../../support/deploymentRollout.js';

const stuck = [...OLD_PODS, podUnit('web-b-1', imagePullPod(HASH.B))];

/** Decisions for A settled, B started, then `obs` at 700 s (past the 600 s deadline) and 710 s. */
function stalled(kind: 'Deployment' | 'DaemonSet', action: 'Undo' | 'Report', obs: (k: typeof kind) => Observation): Decision[] {
  const guard = policy({ targetRef: { kind, name: 'decoder' }, onStall: { action } });
  const first =
    kind === 'Deployment' ? settledOnA() : targetObs({ revisions: [rev(HASH.A, 1)], nodes: ['n1', 'n2', 'n3'].map((n) => node(n, [])) });
  return run(
    [
      { obs: first, at: T0 },
      { obs: obs(kind), at: T0 + sec(10) },
      { obs: obs(kind), at: T0 + sec(710) },
      { obs: obs(kind), at: T0 + sec(720) },
    ],
    { policy: guard },
  );
}

const deploymentStuck = (): Observation => rollingToB(stuck);
const daemonSetStuck = (): Observation =>
  targetObs({
    target: { generation: 2, observedGeneration: 2, templateGeneration: '2', updated: 1, available: 2 },
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    nodes: [
      node('n1', [imagePullPod(HASH.B)]),
      ...['n2', 'n3'].map((n) =>
        node(n, [{ ...imagePullPod(HASH.A), waitingReason: undefined, ready: true, available: true, phase: 'Running' }]),
      ),
    ],
  });

describe('plan: a kind the guard does not undo', () => {
  it('refuses an Undo guard its undo: UndoNotSupported in status, the message and one Event, with no action', () => {
    const ds = stalled('Deployment', 'Undo', deploymentStuck);
    const [stall, after] = [ds[2]!, ds[3]!];
    assert.equal(stall.status.state, 'Stalled');
    assert.equal(stall.status.owner, 'Revision');
    assert.equal(stall.status.undoSkipped?.reason, 'UndoNotSupported');
    assert.match(
      stall.status.undoSkipped?.message ?? '',
      /does not undo Deployments yet; kubectl rollout undo restores the previous ReplicaSet's template/,
    );
    assert.match(stall.status.message ?? '', /Undo not possible: the guard does not undo Deployments yet/);
    assert.equal(stall.events.filter((e) => e.reason === 'UndoSkipped').length, 1, stall.events.map((e) => e.reason).join());
    for (const d of ds) assert.equal(d.action, undefined, `no action: ${JSON.stringify(d.action)}`);
    assert.equal(after.events.filter((e) => e.reason === 'UndoSkipped').length, 0, 'announced once');
  });

  it('in Report mode: undoSkipped says so, and no dry run is asked for', () => {
    const ds = stalled('Deployment', 'Report', deploymentStuck);
    assert.equal(ds[2]!.status.undoSkipped?.reason, 'UndoNotSupported');
    for (const d of ds) assert.equal(d.action, undefined, `no action: ${JSON.stringify(d.action)}`);
  });

  it('still names another owner first: a stall on a dead node is NotTheRevision', () => {
    const dead = (): Observation => rollingToB([...OLD_PODS, withHealth(podUnit('web-b-1', imagePullPod(HASH.B)), deadKubelet())]);
    const d = stalled('Deployment', 'Undo', dead)[2]!;
    assert.equal(d.status.owner, 'Node');
    assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
  });

  it('plans no admission comparison for it, where a DaemonSet refused the same way compares first', () => {
    const refusal = {
      reason: 'FailedCreate',
      message: 'Error creating: pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged',
      at: '2025-01-01T00:00:20.000Z',
    };
    const refusedDeployment = (): Observation => rollingToB([...OLD_PODS], { warning: refusal, updated: 0, current: 3 });
    const deployment = stalled('Deployment', 'Undo', refusedDeployment);
    for (const d of deployment) assert.notEqual(d.action?.kind, 'CompareAdmission');
    const refusedDaemonSet = (): Observation =>
      targetObs({
        target: { generation: 2, observedGeneration: 2, templateGeneration: '2', updated: 0, warning: refusal },
        revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
        nodes: ['n1', 'n2', 'n3'].map((n) =>
          node(n, [{ ...imagePullPod(HASH.A), waitingReason: undefined, ready: true, available: true, phase: 'Running' }]),
        ),
      });
    const daemonSet = stalled('DaemonSet', 'Undo', refusedDaemonSet);
    assert.ok(
      daemonSet.some((d) => d.action?.kind === 'CompareAdmission'),
      daemonSet.map((d) => d.action?.kind).join(),
    );
  });

  it('control: a DaemonSet stalled the same way is undone', () => {
    const ds = stalled('DaemonSet', 'Undo', daemonSetStuck);
    assert.ok(
      ds.some((d) => d.action?.kind === 'Undo'),
      ds.map((d) => `${String(d.status.state)} ${String(d.status.undoSkipped?.reason)} ${String(d.action?.kind)}`).join('; '),
    );
  });
});
