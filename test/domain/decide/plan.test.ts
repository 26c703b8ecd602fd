/**
 * The plan phase (decide/plan.ts, undoChecks.ts) for a Deployment, whose history is its ReplicaSets: an
 * Undo guard's stall blamed on the revision is undone from the previous ReplicaSet (its name, its hash, the
 * template digest the decision read, so a fix pushed meanwhile is never overwritten); Report mode names
 * `kubectl rollout undo deployment/… --to-revision=N` and nothing to delete (the Deployment controller
 * scales the restored ReplicaSet back up itself) and asks for one dry run; a stall that is not the
 * revision's still says whose it is; an admission refusal is compared with the previous ReplicaSet's
 * template first, as for a DaemonSet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/domain/decision.js';
import type { Observation } from '../../../src/domain/observation.js';
import {
  DS_NAME,
  HASH,
  T0,
  deadKubelet,
  imagePullPod,
  node,
  policy,
  rev,
  run,
  sec,
  targetObs,
  withHealth,
} from '../../support/fixtures.js';
import { OLD_PODS, podUnit, rollingToB, settledOnA } from '../../support/deploymentRollout.js';

const stuck = [...OLD_PODS, podUnit('web-b-1', imagePullPod(HASH.B))];
/** The digest of revision B's template, as the Deployment's live template gives it. */
const DIGEST_B = 'digest-of-b';

/** Decisions for A settled, B started, then `obs` at 700 s (past the 600 s deadline) and 710 s. */
function stalled(kind: 'Deployment' | 'DaemonSet', action: 'Undo' | 'Report', obs: (k: typeof kind) => Observation): Decision[] {
  const guard = policy({ targetRef: { kind, name: DS_NAME }, onStall: { action } });
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

const deploymentStuck = (): Observation => rollingToB(stuck, { templateDigest: DIGEST_B });
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
describe('plan: a Deployment undone from its previous ReplicaSet', () => {
  it("undoes an Undo guard's stall on the revision from the previous ReplicaSet, held to the template decided from", () => {
    const ds = stalled('Deployment', 'Undo', deploymentStuck);
    // The first pass past the deadline plans it (run() applies no action, so the next pass plans it again).
    assert.deepEqual(
      ds.map((d) => d.action?.kind),
      [undefined, undefined, 'Undo', 'Undo'],
      ds.map((d) => `${String(d.status.state)} ${String(d.action?.kind)}`).join('; '),
    );
    const undo = ds[2];
    assert.equal(undo!.status.owner, 'Revision');
    assert.equal(undo!.status.undoSkipped, undefined);
    assert.deepEqual(undo!.action && { ...undo!.action, record: undefined }, {
      kind: 'Undo',
      fromHash: HASH.B,
      toHash: HASH.A,
      toRevisionName: rev(HASH.A, 1).name,
      expectedUid: 'uid-decoder',
      expectedTemplateDigest: DIGEST_B,
      record: undefined,
    });
    assert.equal(undo!.action?.kind === 'Undo' ? undo!.action.expectedTemplateGeneration : 'none', undefined);
  });

  it('in Report mode: names kubectl rollout undo deployment with the revision, nothing to delete, and asks for one dry run', () => {
    const ds = stalled('Deployment', 'Report', deploymentStuck);
    const stall = ds[2]!;
    assert.equal(stall.status.state, 'Stalled');
    assert.equal(stall.status.undoSkipped, undefined);
    assert.match(stall.status.message ?? '', new RegExp(`kubectl rollout undo deployment/${DS_NAME} -n \\S+ --to-revision=1`));
    assert.doesNotMatch(stall.status.message ?? '', /kubectl delete pod/);
    assert.equal(ds.filter((d) => d.action?.kind === 'DryRunUndo').length, 1, ds.map((d) => String(d.action?.kind)).join());
    assert.equal(ds.filter((d) => d.action?.kind === 'Undo').length, 0);
  });

  it('counts the surge pod the undo removes: one pod of the new revision beside the three old ones is 1 pod, never 0', () => {
    const stall = stalled('Deployment', 'Report', deploymentStuck)[2]!;
    assert.equal(stall.status.undoPlan?.nodes, 1, JSON.stringify(stall.status.undoPlan));
    assert.match(stall.status.message ?? '', /Would restore revision 1 \(\w+\) on 1 pod: /);
    // A DaemonSet's node keeps its count: one node off the old revision (maxSurge 0).
    assert.equal(stalled('DaemonSet', 'Report', daemonSetStuck)[2]!.status.undoPlan?.nodes, 1);
  });

  it('still names another owner first: a stall on a dead node is NotTheRevision', () => {
    const dead = (): Observation => rollingToB([...OLD_PODS, withHealth(podUnit('web-b-1', imagePullPod(HASH.B)), deadKubelet())]);
    const d = stalled('Deployment', 'Undo', dead)[2]!;
    assert.equal(d.status.owner, 'Node');
    assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
  });

  it("compares an admission refusal with the previous ReplicaSet's template before any undo, as for a DaemonSet", () => {
    const refusal = {
      reason: 'FailedCreate',
      message: 'Error creating: pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged',
      at: '2025-01-01T00:00:20.000Z',
    };
    const refusedDeployment = (): Observation => rollingToB([...OLD_PODS], { warning: refusal, updated: 0, current: 3 });
    const deployment = stalled('Deployment', 'Undo', refusedDeployment);
    const compared = deployment.filter((d) => d.action?.kind === 'CompareAdmission');
    assert.ok(compared.length > 0, deployment.map((d) => d.action?.kind).join());
    assert.equal(compared[0]!.action?.kind === 'CompareAdmission' ? compared[0]!.action.revisionName : '', rev(HASH.A, 1).name);
    const firstCompare = deployment.findIndex((d) => d.action?.kind === 'CompareAdmission');
    const firstUndo = deployment.findIndex((d) => d.action?.kind === 'Undo');
    assert.ok(firstUndo === -1 || firstCompare < firstUndo, 'compared before any undo');
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
