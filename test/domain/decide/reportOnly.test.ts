/**
 * Report mode's sentence: what an undo would restore, and for a StatefulSet the commands that would do
 * it by hand, with the forced rollback of the pods an OrderedReady controller never replaces.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reportedRestore, reportOnly } from '../../../src/domain/decide/reportOnly.js';
import type { Judged, Plan } from '../../../src/domain/decide/pass.js';
import type { BlockedNode, RolloutStatus, UndoPlan } from '../../../src/api/types.js';
import type { TargetView } from '../../../src/domain/observation.js';

const PLAN: UndoPlan = { toRevision: 1, toHash: 'aaa', toRevisionName: 'store-aaa', nodes: 2, forHash: 'bbb' };
const ROLLOUT = { toRevision: { revision: 2, hash: 'bbb' } } as RolloutStatus;

/** The parts of a judged pass reportedRestore reads. */
function judged(target: Partial<TargetView>, blocked: BlockedNode[]): Judged {
  return {
    obs: { target: { kind: 'StatefulSet', name: 'store', namespace: 'db', ...target } },
    attribution: { blocked },
  } as unknown as Judged;
}

const broken = (pod: string, hash = 'bbb'): BlockedNode => ({ node: pod, pod, hash, reason: 'ImagePullBackOff', message: '' });

describe('reportedRestore', () => {
  const cases: Array<[string, Judged, string]> = [
    [
      'a DaemonSet: what and where, as before',
      judged({ kind: 'DaemonSet', name: 'agent' }, [broken('node-1')]),
      'Would restore revision 1 on 2 node(s)',
    ],
    [
      'OrderedReady: the undo, then the pods of the broken revision deleted by hand',
      judged({ waitsOnUnreadyPods: true }, [broken('store-2'), broken('store-1', 'aaa')]),
      'Would restore revision 1 on 2 pods: kubectl rollout undo statefulset/store -n db --to-revision=1, then kubectl delete pod store-2 -n db (the StatefulSet controller does not replace a pod that never became Ready, even after the revert)',
    ],
    [
      'Parallel: the controller replaces the broken pods itself after the revert',
      judged({ waitsOnUnreadyPods: false }, [broken('store-2')]),
      'Would restore revision 1 on 2 pods: kubectl rollout undo statefulset/store -n db --to-revision=1',
    ],
  ];
  for (const [name, pass, want] of cases) it(name, () => assert.equal(reportedRestore(pass, ROLLOUT, PLAN, 'revision 1'), want));

  const deployment = judged({ kind: 'Deployment', name: 'web' }, [broken('web-bbb-x1')]);
  const checks: Array<[string, Pick<UndoPlan, 'dryRun' | 'dryRunMessage'> | undefined, string]> = [
    [
      'not yet dry-run: the command',
      { dryRun: 'NotRun' },
      'Would restore revision 1 on 2 pods: kubectl rollout undo deployment/web -n db --to-revision=1',
    ],
    [
      'the dry run accepted it: the command',
      { dryRun: 'Accepted' },
      'Would restore revision 1 on 2 pods: kubectl rollout undo deployment/web -n db --to-revision=1',
    ],
    [
      'the dry run refused it (a manager runs the Deployment by naming it): no command, the refusal',
      {
        dryRun: 'Rejected',
        dryRunMessage: 'the Deployment is managed by Rollout/web-rollout, which runs it by reference and would revert an undo',
      },
      'Would restore revision 1 on 2 pods, but the dry run of that undo was refused, so there is no command to run by hand: the Deployment is managed by Rollout/web-rollout, which runs it by reference and would revert an undo',
    ],
  ];
  for (const [name, checked, want] of checks)
    it(`a Deployment, ${name}`, () => assert.equal(reportedRestore(deployment, ROLLOUT, PLAN, 'revision 1', checked), want));
});

describe('reportOnly', () => {
  it('asks for the dry run once per plan, and says it is Report mode', () => {
    const out: Plan = { messageSuffix: '', events: [], lastUndo: undefined, undoPlan: { ...PLAN } };
    const first = reportOnly(PLAN, 'Would restore revision 1 on 2 pods', out);
    assert.equal(first.messageSuffix, ' Would restore revision 1 on 2 pods (onStall.action is Report).');
    assert.deepEqual(first.action, { kind: 'DryRunUndo', toRevisionName: 'store-aaa', toHash: 'aaa', forHash: 'bbb' });
    const again = reportOnly(PLAN, 'x', { messageSuffix: '', events: [], lastUndo: undefined, undoPlan: { ...PLAN, dryRun: 'Accepted' } });
    assert.equal(again.action, undefined);
  });
});
