/**
 * Cause classes: kubelet and scheduler reasons mapped onto one class per remedy.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { causeHint, classifyReason, dominantCause, failuresFirst, podBlockReason, podNewlyFailing } from '../../src/domain/causes.js';
import { TARGET_KINDS, type BlockedNode, type CauseClass, type EmptyNode } from '../../src/api/types.js';
import { DAEMONSET_WORDS } from '../support/kindWords.js';
import { CAUSE_CLASSES } from '../support/fixtures.js';
import type { PodView } from '../../src/domain/observation.js';
import { HASH, pod } from '../support/fixtures.js';

describe('classifyReason', () => {
  const cases: { reason: string; message?: string; want: CauseClass }[] = [
    { reason: 'ErrImagePull', want: 'ImagePullFailure' },
    { reason: 'ImagePullBackOff', want: 'ImagePullFailure' },
    { reason: 'InvalidImageName', want: 'ImagePullFailure' },
    { reason: 'ErrImageNeverPull', want: 'ImagePullFailure' },
    { reason: 'CrashLoopBackOff', want: 'CrashLoop' },
    { reason: 'RunContainerError', want: 'CrashLoop' },
    { reason: 'CreateContainerError', want: 'CrashLoop' },
    { reason: 'CreateContainerConfigError', want: 'CrashLoop' },
    { reason: 'Unschedulable', message: '0/3 nodes are available: 1 Insufficient cpu.', want: 'InsufficientResources' },
    {
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 1 Insufficient memory, 2 node(s) had untolerated taint.',
      want: 'InsufficientResources',
    },
    { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient ephemeral-storage.', want: 'InsufficientResources' },
    { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient nvidia.com/gpu.', want: 'InsufficientResources' },
    { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Too many pods.', want: 'InsufficientResources' },
    { reason: 'Unschedulable', message: '0/1 nodes are available: 1 insufficient CPU.', want: 'InsufficientResources' },
    {
      reason: 'Unschedulable',
      message: "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
      want: 'Unschedulable',
    },
    { reason: 'Unschedulable', message: '0/1 nodes are available: 1 node(s) had volume node affinity conflict.', want: 'Unschedulable' },
    { reason: 'Unschedulable', message: '', want: 'Unschedulable' },
    { reason: 'NotReady', want: 'NotReady' },
    { reason: 'Running', want: 'NotReady' },
    { reason: 'ContainerCreating', want: 'Unknown' },
    { reason: 'Pending', want: 'Unknown' },
    { reason: 'NoPod', want: 'Unknown' },
    { reason: 'Terminating', want: 'Unknown' },
    { reason: '', want: 'Unknown' },
  ];
  for (const tc of cases) {
    it(`${tc.reason || '(empty)'}${tc.message ? ` "${tc.message}"` : ''} → ${tc.want}`, () =>
      assert.equal(classifyReason(tc.reason, tc.message ?? ''), tc.want));
  }
});

describe('podBlockReason', () => {
  const cases: { name: string; pod: PodView; want: { reason: string; message: string } }[] = [
    {
      name: 'a container waiting reason wins, with its message',
      pod: pod({ hash: HASH.B, waitingReason: 'ImagePullBackOff', waitingMessage: 'Back-off pulling image' }),
      want: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' },
    },
    {
      name: 'a waiting reason without message',
      pod: pod({ hash: HASH.B, waitingReason: 'ContainerCreating' }),
      want: { reason: 'ContainerCreating', message: '' },
    },
    {
      name: 'unscheduled without a reason → Pending',
      pod: pod({ hash: HASH.B, scheduled: false, phase: 'Pending', ready: false }),
      want: { reason: 'Pending', message: 'pod is not yet scheduled' },
    },
    {
      name: 'running but not ready → NotReady',
      pod: pod({ hash: HASH.B, ready: false }),
      want: { reason: 'NotReady', message: 'container running but not ready' },
    },
    {
      name: 'ready but not yet for minReadySeconds → NotReady',
      pod: pod({ hash: HASH.B, ready: true, available: false }),
      want: { reason: 'NotReady', message: 'ready, but not yet for minReadySeconds' },
    },
    {
      name: 'otherwise the phase',
      pod: pod({ hash: HASH.B, phase: 'Failed', ready: false }),
      want: { reason: 'Failed', message: 'pod phase Failed' },
    },
    {
      name: 'no phase at all',
      pod: pod({ hash: HASH.B, phase: '', ready: false }),
      want: { reason: 'Unknown', message: 'pod phase unknown' },
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(podBlockReason(tc.pod), tc.want));
});

describe('dominantCause', () => {
  const b = (reason: string, message = ''): BlockedNode => ({ node: `n-${reason}-${message.length}`, reason, message });
  const e = (reason: 'NoPod' | 'Terminating'): EmptyNode => ({ node: `e-${reason}`, reason, message: '' });
  const cases: { name: string; blocked: BlockedNode[]; empty: EmptyNode[]; want: CauseClass }[] = [
    { name: 'nothing blocked → Unknown', blocked: [], empty: [], want: 'Unknown' },
    { name: 'one class', blocked: [b('ImagePullBackOff')], empty: [], want: 'ImagePullFailure' },
    {
      name: 'the class shared by most nodes wins',
      blocked: [b('ImagePullBackOff'), b('CrashLoopBackOff'), b('RunContainerError')],
      empty: [],
      want: 'CrashLoop',
    },
    {
      name: 'ties break by precedence: image pull before crash loop',
      blocked: [b('CrashLoopBackOff'), b('ErrImagePull')],
      empty: [],
      want: 'ImagePullFailure',
    },
    {
      name: 'ties break by precedence: insufficient resources before crash loop',
      blocked: [b('CrashLoopBackOff'), b('Unschedulable', 'Insufficient memory')],
      empty: [],
      want: 'InsufficientResources',
    },
    {
      name: 'ties break by precedence: crash loop before unschedulable',
      blocked: [b('Unschedulable', 'taint'), b('CrashLoopBackOff')],
      empty: [],
      want: 'CrashLoop',
    },
    {
      name: 'ties break by precedence: NotReady before Unknown',
      blocked: [b('NotReady'), b('ContainerCreating')],
      empty: [],
      want: 'NotReady',
    },
    { name: 'empty nodes count as Unknown', blocked: [b('NotReady')], empty: [e('NoPod'), e('Terminating')], want: 'Unknown' },
    {
      name: 'a definitive cause beats a single empty node on a tie',
      blocked: [b('ImagePullBackOff')],
      empty: [e('NoPod')],
      want: 'ImagePullFailure',
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(dominantCause(tc.blocked, tc.empty), tc.want));
});

describe('causeHint', () => {
  const classes = CAUSE_CLASSES;

  it('every cause class names where to look, for each kind', () => {
    for (const kind of TARGET_KINDS) for (const c of classes) assert.match(causeHint(c, kind), /kubectl|PodScheduled/, `${kind} ${c}`);
  });

  it("a StatefulSet's hints name the StatefulSet and kubectl … sts, never a DaemonSet's words", () => {
    for (const c of classes) assert.doesNotMatch(causeHint(c, 'StatefulSet'), DAEMONSET_WORDS, c);
    assert.match(causeHint('ControllerNotObserving', 'StatefulSet'), /the StatefulSet controller .*kubectl get sts -o yaml/);
    assert.match(causeHint('AdmissionRefused', 'StatefulSet'), /kubectl describe sts: Warning FailedCreate/);
  });

  it("a Deployment's refusals point at its ReplicaSet, whose controller creates the pods and reports FailedCreate", () => {
    assert.match(causeHint('AdmissionRefused', 'Deployment'), /kubectl describe rs: Warning FailedCreate/);
    assert.match(causeHint('QuotaExceeded', 'Deployment'), /kubectl describe rs: Warning FailedCreate ... exceeded quota/);
    assert.doesNotMatch(causeHint('QuotaExceeded', 'Deployment'), /describe deploy/);
    assert.match(causeHint('QuotaExceeded', 'DaemonSet'), /kubectl describe ds: Warning FailedCreate ... exceeded quota/);
  });

  it("a DaemonSet's hints keep its columns", () => {
    assert.match(causeHint('ControllerNotActing', 'DaemonSet'), /kubectl get ds: UP-TO-DATE below DESIRED/);
    assert.match(causeHint('MinReadySeconds', 'DaemonSet'), /kubectl get ds: READY above AVAILABLE/);
  });
});

describe('failuresFirst', () => {
  it('definite failures first, then nodes on their way (or unexplained), each group by name', () => {
    const items = [
      { node: 'a', cause: 'NotReady' as const },
      { node: 'z', cause: 'ImagePullFailure' as const },
      { node: 'b' },
      { node: 'm', cause: 'NodeNotReady' as const },
      { node: 'c', cause: 'Unknown' as const },
    ];
    assert.deepEqual(
      failuresFirst(items).map((x) => x.node),
      ['m', 'z', 'a', 'b', 'c'],
    );
    assert.deepEqual(
      items.map((x) => x.node),
      ['a', 'z', 'b', 'm', 'c'],
      'the input is not reordered',
    );
  });

  it("a pod's own definite failure before a cause only attribution found, and that before a node on its way", () => {
    const items = [
      { node: 'a', reason: 'Pending', message: 'pod is not yet scheduled', cause: 'SchedulerNotActing' as const },
      { node: 'b', reason: 'Running', message: 'container running but not ready', cause: 'NodeNotReady' as const },
      { node: 'c', reason: 'Pending', message: 'pod is not yet scheduled', cause: 'Unknown' as const },
      { node: 'y', reason: 'ImagePullBackOff', message: 'Back-off pulling image', cause: 'ImagePullFailure' as const },
      {
        node: 'z',
        reason: 'Unschedulable',
        message: '0/9 nodes are available: 1 Insufficient cpu.',
        cause: 'InsufficientResources' as const,
      },
    ];
    assert.deepEqual(
      failuresFirst(items).map((x) => x.node),
      ['y', 'z', 'a', 'b', 'c'],
      'the scheduler refusing the pod ranks before the scheduler not having looked at it yet',
    );
  });
});

describe('podNewlyFailing: which pod changes are served first', () => {
  const crash = { container: 'c', reason: 'Error', exitCode: 1, at: '2026-01-01T00:00:05Z' };
  const cases: Array<{
    name: string;
    prev?: Parameters<typeof podNewlyFailing>[0];
    next: Parameters<typeof podNewlyFailing>[1];
    want: boolean;
  }> = [
    { name: 'a new pod already failing to pull', next: { waitingReason: 'ErrImagePull' }, want: true },
    {
      name: 'pulling → back-off: the same cause, a new reason',
      prev: { waitingReason: 'ErrImagePull' },
      next: { waitingReason: 'ImagePullBackOff' },
      want: true,
    },
    { name: 'still in back-off', prev: { waitingReason: 'ImagePullBackOff' }, next: { waitingReason: 'ImagePullBackOff' }, want: false },
    {
      name: 'the scheduler finds no room',
      next: { waitingReason: 'Unschedulable', waitingMessage: '0/3 nodes: 3 Insufficient cpu' },
      want: true,
    },
    { name: 'a crash loop begins', prev: { waitingReason: 'ContainerCreating' }, next: { waitingReason: 'CrashLoopBackOff' }, want: true },
    { name: 'merely starting', prev: {}, next: { waitingReason: 'ContainerCreating' }, want: false },
    { name: 'Ready: nothing waits', prev: { waitingReason: 'ContainerCreating' }, next: {}, want: false },
    { name: 'a first crash after running', prev: {}, next: { lastTermination: crash }, want: true },
    { name: 'the same crash seen again', prev: { lastTermination: crash }, next: { lastTermination: crash }, want: false },
    {
      name: 'a later crash',
      prev: { lastTermination: crash },
      next: { lastTermination: { ...crash, at: '2026-01-01T00:01:00Z' } },
      want: true,
    },
    { name: 'a clean exit', prev: {}, next: { lastTermination: { ...crash, exitCode: 0, reason: 'Completed' } }, want: false },
    { name: 'OOMKilled', prev: {}, next: { lastTermination: { ...crash, exitCode: 137, reason: 'OOMKilled' } }, want: true },
  ];
  for (const c of cases) it(c.name, () => assert.equal(podNewlyFailing(c.prev, c.next), c.want));
});
