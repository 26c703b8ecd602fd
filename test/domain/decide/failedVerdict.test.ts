/**
 * The verdicts on evidence (failedVerdict.ts), through decide: a revision whose pods crash after becoming
 * Ready is Failed at once, in the words of the kind's units. The DaemonSet's (nodes) are checked in
 * spread.test.ts; here a Deployment's, whose units are pods.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HASH, T0, health, iso, pod, policy, run, sec } from '../../support/fixtures.js';
import { OLD_PODS, podUnit, rollingToB, settledOnA } from '../../support/deploymentRollout.js';

const GUARD = policy({ targetRef: { kind: 'Deployment', name: 'decoder' }, suspectAfterSeconds: 120, progressDeadlineSeconds: 600 });
describe('failedVerdict: a Deployment revision that crashes once Ready', () => {
  // Two surge pods, each Ready for a while and then crashed once; the four old pods untouched.
  const crashed = (name: string): ReturnType<typeof podUnit> =>
    podUnit(
      name,
      pod({
        hash: HASH.B,
        ready: false,
        restartCount: 1,
        waitingReason: 'CrashLoopBackOff',
        lastTermination: { container: 'web', reason: 'Error', exitCode: 1, at: iso(T0 + sec(15)) },
      }),
    );
  const crashing = rollingToB([...OLD_PODS, crashed('web-b-1'), crashed('web-b-2')], { current: 5, updated: 2, ready: 3, available: 3 });

  it('is Failed at once, in the words of its units (pods, not nodes), naming the crashed pods', () => {
    const [, failed] = run(
      [
        { obs: settledOnA(), at: T0 },
        { obs: crashing, at: T0 + sec(20) },
      ],
      { policy: GUARD },
    ).map((d) => d.status);
    assert.equal(failed!.state, 'Failed');
    assert.equal(failed!.owner, 'Revision');
    assert.match(failed!.message!, /crashes after starting on 2 Ready pods \(failedNodesThreshold 2\): web-b-1 \(1 restart, Error/);
    assert.match(failed!.message!, /It runs on 2 of 3 pods\./);
    assert.doesNotMatch(failed!.message!, /node/);
  });
});

describe('failedVerdict: a Deployment revision that takes its node down', () => {
  // Two surge pods of B on one node, created at +10 s; the node turned NotReady at +30 s, right after.
  const onHost = (name: string, ready: 'True' | 'False'): ReturnType<typeof podUnit> => ({
    ...podUnit(name, pod({ hash: HASH.B, ready: false, createdAt: iso(T0 + sec(10)) })),
    host: 'gpu-7',
    health: ready === 'True' ? health() : health({ ready: 'False', reason: 'KubeletNotReady', since: iso(T0 + sec(30)) }),
  });
  const starting = rollingToB([...OLD_PODS, onHost('web-b-1', 'True'), onHost('web-b-2', 'True')], { current: 5, updated: 2 });
  const down = rollingToB([...OLD_PODS, onHost('web-b-1', 'False'), onHost('web-b-2', 'False')], { current: 5, updated: 2 });

  it('counts the node once for its two pods, and names it beside each pod', () => {
    const statuses = run(
      [
        { obs: settledOnA(), at: T0 },
        { obs: starting, at: T0 + sec(10) },
        { obs: down, at: T0 + sec(40) },
      ],
      { policy: GUARD },
    ).map((d) => d.status);
    const failed = statuses[2]!;
    assert.equal(failed.state, 'Failed');
    assert.equal(failed.cause, 'NodeNotReady');
    assert.deepEqual(
      failed.rollout?.failures?.nodes.map((n) => [n.node, n.host]),
      [
        ['web-b-1', 'gpu-7'],
        ['web-b-2', 'gpu-7'],
      ],
    );
    assert.match(failed.message!, /takes its own node down: 1 node turned NotReady right after its pod started there/);
    assert.match(failed.message!, /web-b-1 \(its node gpu-7 NotReady since [^)]*, right after the pod started\)/);
  });
});
