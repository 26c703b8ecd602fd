/**
 * Attribution: whose fault each blocked or empty node is, and so whose fault the rollout's stall is.
 * Pure data in, pure data out; the clock is a plain millisecond number.
 *
 * The rule under test: a node whose own Ready condition is not True (or that the node lifecycle
 * controller tainted unreachable, or that reports pressure) is blamed before anything its pods say;
 * the revision is blamed only with evidence from a Ready node; a configured wait (minReadySeconds, a
 * termination grace period) is nobody's fault.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { attribute, attributeShrink, type AttributionInput } from '../../../src/domain/decide/attribute.js';
import { attributeBlocked, attributeEmpty, nodeFault } from '../../../src/domain/nodeAttribution.js';
import { podBlockReason } from '../../../src/domain/causes.js';
import { computeSplit } from '../../../src/domain/split.js';
import type { BlockedNode, CauseClass, EmptyNode, FaultOwner, LeftNode } from '../../../src/api/types.js';
import type { NodeView, PodView } from '../../../src/domain/observation.js';
import type { NodeHealth } from '../../../src/api/objects.js';
import {
  HASH,
  T0,
  crashLoopPod,
  deadKubelet,
  deletingPod,
  health,
  imagePullPod,
  node,
  notReadyPod,
  pod,
  rev,
  sec,
  unschedulablePod,
  unscheduledPod,
  waitingOutMinReadyPod,
  withHealth,
} from '../../support/fixtures.js';

/** "Now" in every case of this file. */
const NOW = T0 + sec(1000);
const REVISIONS = [rev(HASH.A, 1), rev(HASH.B, 2)];
const INSUFFICIENT_CPU = '0/3 nodes are available: 1 Insufficient cpu. preemption: 0/3 nodes are available.';
const ANTI_AFFINITY = "0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.";
const NOT_READY: NodeHealth = health({ ready: 'False', reason: 'KubeletNotReady', message: 'container runtime network not ready' });

/** `node(name, pods)` with `h` as its health, or no health at all when `h` is undefined. */
function nodeWith(name: string, pods: PodView[], h: NodeHealth | undefined): NodeView {
  const n = node(name, pods);
  return h ? withHealth(n, h) : n;
}

/** The blocked entry the split makes for a node's (single) pod of revision B. */
function blockedOf(n: NodeView): BlockedNode {
  const b = computeSplit([n], REVISIONS, HASH.B).blocked[0];
  if (!b) throw new Error(`${n.node} is not blocked`);
  return b;
}

/** The empty entry the split makes for a node with no live pod. */
function emptyOf(n: NodeView): EmptyNode {
  const e = computeSplit([n], REVISIONS, HASH.B).empty[0];
  if (!e) throw new Error(`${n.node} is not empty`);
  return e;
}

// --- nodeFault ---------------------------------------------------------------------------------------

describe('nodeFault: what the node itself says', () => {
  const cases: { name: string; h: NodeHealth | undefined; want: { cause: CauseClass; message: string } | undefined }[] = [
    { name: 'health not known (node deleted, or not reported)', h: undefined, want: undefined },
    { name: 'Ready True', h: health(), want: undefined },
    { name: 'Ready True with an empty pressure list', h: health({ pressure: [] }), want: undefined },
    {
      name: 'Ready Unknown: the kubelet stopped posting status',
      h: deadKubelet(),
      want: { cause: 'NodeNotReady', message: 'node is Unknown (Kubelet stopped posting node status.)' },
    },
    {
      name: 'Ready Unknown without a message falls back to the reason',
      h: health({ ready: 'Unknown', reason: 'NodeStatusUnknown' }),
      want: { cause: 'NodeNotReady', message: 'node is Unknown (NodeStatusUnknown)' },
    },
    {
      name: 'Ready False with a message',
      h: NOT_READY,
      want: { cause: 'NodeNotReady', message: 'node is NotReady (container runtime network not ready)' },
    },
    {
      name: 'Ready False, nothing said',
      h: health({ ready: 'False' }),
      want: { cause: 'NodeNotReady', message: 'node is NotReady (no reason given)' },
    },
    {
      name: 'Ready True but tainted unreachable (the taint is newer than the condition)',
      h: health({ unreachable: true }),
      want: { cause: 'NodeNotReady', message: 'node is unreachable (tainted unreachable by the node lifecycle controller)' },
    },
    {
      name: 'memory and disk pressure',
      h: health({ pressure: ['MemoryPressure', 'DiskPressure'] }),
      want: { cause: 'NodePressure', message: 'node reports MemoryPressure, DiskPressure' },
    },
    {
      name: 'not Ready wins over pressure',
      h: health({ ready: 'Unknown', pressure: ['DiskPressure'] }),
      want: { cause: 'NodeNotReady', message: 'node is Unknown (no reason given)' },
    },
    {
      name: 'unreachable wins over pressure',
      h: health({ unreachable: true, pressure: ['PIDPressure'] }),
      want: { cause: 'NodeNotReady', message: 'node is unreachable (tainted unreachable by the node lifecycle controller)' },
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.want ? tc.want.cause : 'no fault'}`, () => assert.deepEqual(nodeFault(tc.h), tc.want));
  }
});

// --- attributeBlocked ------------------------------------------------------------------------------------

describe('attributeBlocked: one node blocked on a pod of the target revision', () => {
  const cases: {
    name: string;
    h: NodeHealth | undefined;
    pod: PodView;
    minReadySeconds?: number;
    owner: FaultOwner;
    cause: CauseClass;
    /** The whole message, or a pattern it must match. */
    message: string | RegExp;
  }[] = [
    // A node that is not Ready is blamed before its pods: the lifecycle controller marks them not ready.
    {
      name: 'Ready Unknown, the pod says NotReady (marked by the node lifecycle controller)',
      h: deadKubelet(),
      pod: notReadyPod(HASH.B),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: 'node is Unknown (Kubelet stopped posting node status.); container running but not ready',
    },
    {
      name: 'Ready Unknown, the pod last said CrashLoopBackOff',
      h: deadKubelet(),
      pod: crashLoopPod(HASH.B),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: 'node is Unknown (Kubelet stopped posting node status.); back-off 5m0s restarting failed container',
    },
    {
      name: 'Ready Unknown, the pod last said ImagePullBackOff',
      h: deadKubelet(),
      pod: imagePullPod(HASH.B),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^node is Unknown \(Kubelet stopped posting node status\.\); Back-off pulling image/,
    },
    {
      name: 'Ready False, the pod not ready',
      h: NOT_READY,
      pod: notReadyPod(HASH.B),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^node is NotReady \(container runtime network not ready\); /,
    },
    {
      name: 'Ready False even while the pod waits out minReadySeconds',
      h: NOT_READY,
      pod: waitingOutMinReadyPod(HASH.B, NOW - sec(2)),
      minReadySeconds: 12,
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^node is NotReady/,
    },
    {
      name: 'tainted unreachable, the pod crash-looping',
      h: health({ unreachable: true }),
      pod: crashLoopPod(HASH.B),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^node is unreachable \(tainted unreachable by the node lifecycle controller\); /,
    },
    {
      name: 'DiskPressure, the image not pulled',
      h: health({ pressure: ['DiskPressure'] }),
      pod: imagePullPod(HASH.B),
      owner: 'Node',
      cause: 'NodePressure',
      message: /^node reports DiskPressure; Back-off pulling image/,
    },
    // Back from an outage: the node is Ready, the pod's containers are ready, its Ready was set False by
    // the node lifecycle controller and not yet set back.
    {
      name: 'Ready True, the pod marked not ready while its containers are ready',
      h: health(),
      pod: { ...notReadyPod(HASH.B), markedNotReady: true },
      owner: 'Node',
      cause: 'NodeNotReady',
      message:
        'containers ready, but the pod was marked not ready (no probe failed): as the node lifecycle controller marks the pods of a node that stopped reporting; the kubelet has not reported it ready again',
    },
    {
      name: 'Ready True, the pod marked not ready after a restart: still the outage, not a probe',
      h: health(),
      pod: { ...notReadyPod(HASH.B), markedNotReady: true, restartCount: 1 },
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^containers ready, but the pod was marked not ready/,
    },
    {
      name: 'Ready True, the pod not ready by its probe: the revision',
      h: health(),
      pod: notReadyPod(HASH.B),
      owner: 'Revision',
      cause: 'NotReady',
      message: 'container running but not ready',
    },
    // A configured wait.
    {
      name: 'ready 4 s of minReadySeconds 12',
      h: health(),
      pod: waitingOutMinReadyPod(HASH.B, NOW - sec(4)),
      minReadySeconds: 12,
      owner: 'ConfiguredWait',
      cause: 'MinReadySeconds',
      message: 'ready, waiting out minReadySeconds 12 (8s left)',
    },
    {
      name: 'ready 4.5 s of minReadySeconds 12: the seconds left round up',
      h: health(),
      pod: waitingOutMinReadyPod(HASH.B, NOW - 4500),
      minReadySeconds: 12,
      owner: 'ConfiguredWait',
      cause: 'MinReadySeconds',
      message: 'ready, waiting out minReadySeconds 12 (8s left)',
    },
    {
      name: 'ready but not available, readySince unknown',
      h: health(),
      pod: pod({ hash: HASH.B, ready: true, available: false }),
      minReadySeconds: 12,
      owner: 'ConfiguredWait',
      cause: 'MinReadySeconds',
      message: 'ready, waiting out minReadySeconds 12',
    },
    {
      name: 'ready for longer than minReadySeconds, not yet counted available',
      h: health(),
      pod: waitingOutMinReadyPod(HASH.B, NOW - sec(30)),
      minReadySeconds: 12,
      owner: 'ConfiguredWait',
      cause: 'MinReadySeconds',
      message: 'ready, waiting out minReadySeconds 12 (0s left)',
    },
    // The revision itself fails on a Ready node.
    {
      name: 'ImagePullBackOff on a Ready node',
      h: health(),
      pod: imagePullPod(HASH.B),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      message: `Back-off pulling image "registry.example/decoder:${HASH.B}"`,
    },
    {
      name: 'ErrImagePull on a Ready node',
      h: health(),
      pod: pod({ hash: HASH.B, waitingReason: 'ErrImagePull', waitingMessage: 'manifest unknown' }),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      message: 'manifest unknown',
    },
    {
      name: 'CrashLoopBackOff on a Ready node',
      h: health(),
      pod: crashLoopPod(HASH.B),
      owner: 'Revision',
      cause: 'CrashLoop',
      message: 'back-off 5m0s restarting failed container',
    },
    {
      name: 'CreateContainerConfigError on a Ready node',
      h: health(),
      pod: pod({ hash: HASH.B, waitingReason: 'CreateContainerConfigError', waitingMessage: 'configmap "x" not found' }),
      owner: 'Revision',
      cause: 'CrashLoop',
      message: 'configmap "x" not found',
    },
    {
      name: "Unschedulable 'Insufficient cpu' on a Ready node",
      h: health(),
      pod: unschedulablePod(HASH.B, INSUFFICIENT_CPU),
      owner: 'Revision',
      cause: 'InsufficientResources',
      message: INSUFFICIENT_CPU,
    },
    {
      name: 'Unschedulable for another reason on a Ready node',
      h: health(),
      pod: unschedulablePod(HASH.B, ANTI_AFFINITY),
      owner: 'Revision',
      cause: 'Unschedulable',
      message: ANTI_AFFINITY,
    },
    {
      name: 'running, readiness failing, on a Ready node',
      h: health(),
      pod: notReadyPod(HASH.B),
      owner: 'Revision',
      cause: 'NotReady',
      message: 'container running but not ready',
    },
    {
      name: 'ImagePullBackOff, node health not reported',
      h: undefined,
      pod: imagePullPod(HASH.B),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      message: /Back-off pulling image/,
    },
    // The control plane.
    {
      name: 'Pending with no PodScheduled condition at all (schedulingAttempted false)',
      h: health(),
      pod: unscheduledPod(HASH.B),
      owner: 'ControlPlane',
      cause: 'SchedulerNotActing',
      message: 'pod Pending with no PodScheduled condition: no scheduler has looked at it',
    },
    // Nothing the API states.
    {
      name: 'Pending, unscheduled, scheduling attempt unknown',
      h: health(),
      pod: pod({ hash: HASH.B, phase: 'Pending', scheduled: false, ready: false }),
      owner: 'Unknown',
      cause: 'Unknown',
      message: 'pod is not yet scheduled',
    },
    {
      name: 'scheduled, Pending, no waiting reason (containers being created)',
      h: health(),
      pod: pod({ hash: HASH.B, phase: 'Pending', ready: false }),
      owner: 'Unknown',
      cause: 'Unknown',
      message: 'pod phase Pending',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.owner}/${tc.cause}`, () => {
      const n = nodeWith('node-3', [tc.pod], tc.h);
      const b = blockedOf(n);
      const got = attributeBlocked(b, n, n.pods[0], NOW, tc.minReadySeconds ?? 0);
      assert.equal(got.owner, tc.owner);
      assert.equal(got.cause, tc.cause);
      if (typeof tc.message === 'string') assert.equal(got.message, tc.message);
      else assert.match(got.message, tc.message);
      // Everything else is the split's: node, pod, revision and the kubelet's reason are kept as they were.
      assert.deepEqual(
        { ...got, owner: undefined, cause: undefined, message: undefined },
        { ...b, owner: undefined, cause: undefined, message: undefined },
      );
    });
  }

  it('without the node or pod views it classifies from the reason alone (and never blames a node it cannot see)', () => {
    const b: BlockedNode = { node: 'node-9', pod: 'gone', hash: HASH.B, reason: 'ImagePullBackOff', message: 'Back-off pulling image' };
    assert.deepEqual(attributeBlocked(b, undefined, undefined, NOW, 0), { ...b, owner: 'Revision', cause: 'ImagePullFailure' });
    const unknown: BlockedNode = { node: 'node-9', reason: 'Pending', message: 'pod is not yet scheduled' };
    assert.deepEqual(attributeBlocked(unknown, undefined, undefined, NOW, 0), { ...unknown, owner: 'Unknown', cause: 'Unknown' });
  });

  it('does not modify its input', () => {
    const n = nodeWith('node-3', [crashLoopPod(HASH.B)], deadKubelet());
    const b = blockedOf(n);
    const copy = structuredClone(b);
    attributeBlocked(Object.freeze(b), n, n.pods[0], NOW, 0);
    assert.deepEqual(b, copy);
  });

  it('the reason on which the split blocked the node is podBlockReason of its pod', () => {
    // Guards the helper this table relies on: if the split changed how it picks reasons, the table would lie.
    const p = crashLoopPod(HASH.B);
    const b = blockedOf(node('node-3', [p]));
    assert.deepEqual({ reason: b.reason, message: b.message }, podBlockReason(p));
  });
});

// --- attributeEmpty ----------------------------------------------------------------------------------------

describe('attributeEmpty: one node that should run the pod and has none', () => {
  const cases: { name: string; n: NodeView; owner: FaultOwner; cause: CauseClass; message: string | RegExp }[] = [
    {
      name: 'no pod on a node whose kubelet stopped',
      n: nodeWith('node-3', [], deadKubelet()),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: 'node is Unknown (Kubelet stopped posting node status.); no daemon pod exists on this node',
    },
    {
      name: 'the old pod Terminating past its grace period on a node whose kubelet stopped',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW - sec(300))], deadKubelet()),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: 'node is Unknown (Kubelet stopped posting node status.); the old pod is terminating and no new pod exists yet',
    },
    {
      name: 'the old pod Terminating within its grace period on a node whose kubelet stopped (the node comes first)',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW + sec(30))], deadKubelet()),
      owner: 'Node',
      cause: 'NodeNotReady',
      message: /^node is Unknown/,
    },
    {
      name: 'no pod on a node under MemoryPressure',
      n: nodeWith('node-3', [], health({ pressure: ['MemoryPressure'] })),
      owner: 'Node',
      cause: 'NodePressure',
      message: /^node reports MemoryPressure; /,
    },
    {
      name: 'Terminating, 25 s of its grace period left',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW + sec(25))], health()),
      owner: 'ConfiguredWait',
      cause: 'PodTerminating',
      message: 'the old pod is in its termination grace period (25s left)',
    },
    {
      name: 'Terminating, half a second left (rounds up)',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW + 500)], health()),
      owner: 'ConfiguredWait',
      cause: 'PodTerminating',
      message: 'the old pod is in its termination grace period (1s left)',
    },
    {
      name: 'Terminating, the grace period ends exactly now',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW)], health()),
      owner: 'Node',
      cause: 'PodTerminating',
      message: 'the old pod is still Terminating past its grace period: the kubelet has not removed it',
    },
    {
      name: 'Terminating 1 ms past its grace period',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW - 1)], health()),
      owner: 'Node',
      cause: 'PodTerminating',
      message: 'the old pod is still Terminating past its grace period: the kubelet has not removed it',
    },
    {
      name: 'two pods Terminating: the later grace period decides',
      n: nodeWith('node-3', [deletingPod(HASH.A, NOW - sec(60)), deletingPod(HASH.B, NOW + sec(10))], health()),
      owner: 'ConfiguredWait',
      cause: 'PodTerminating',
      message: 'the old pod is in its termination grace period (10s left)',
    },
    {
      name: 'Terminating with no deletionTimestamp known',
      n: nodeWith('node-3', [pod({ hash: HASH.A, deleting: true })], health()),
      owner: 'Unknown',
      cause: 'Unknown',
      message: 'the old pod is terminating and no new pod exists yet',
    },
    {
      name: 'no pod on a Ready node: nothing says why',
      n: nodeWith('node-3', [], health()),
      owner: 'Unknown',
      cause: 'Unknown',
      message: 'no daemon pod exists on this node',
    },
    {
      name: 'no pod, node health not reported',
      n: nodeWith('node-3', [], undefined),
      owner: 'Unknown',
      cause: 'Unknown',
      message: 'no daemon pod exists on this node',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.owner}/${tc.cause}`, () => {
      const e = emptyOf(tc.n);
      const got = attributeEmpty(e, tc.n, NOW);
      assert.equal(got.owner, tc.owner);
      assert.equal(got.cause, tc.cause);
      if (typeof tc.message === 'string') assert.equal(got.message, tc.message);
      else assert.match(got.message, tc.message);
      assert.equal(got.node, e.node);
      assert.equal(got.reason, e.reason, 'the split reason is kept');
    });
  }

  it('a Terminating entry whose node view is missing is Unknown', () => {
    const e: EmptyNode = { node: 'node-9', reason: 'Terminating', message: 'the old pod is terminating and no new pod exists yet' };
    assert.deepEqual(attributeEmpty(e, undefined, NOW), { ...e, owner: 'Unknown', cause: 'Unknown' });
  });
});

// --- attributeShrink ------------------------------------------------------------------------------------

describe('attributeShrink: why nodes left the targets', () => {
  const left = (...changed: (boolean | undefined)[]): LeftNode[] =>
    changed.map((c, i) =>
      c === undefined
        ? { node: `node-${i + 1}`, reason: 'untolerated taint' }
        : { node: `node-${i + 1}`, reason: 'untolerated taint', nodeChanged: c },
    );
  const cases: { name: string; left: LeftNode[]; want: FaultOwner }[] = [
    { name: 'nobody left', left: [], want: 'Unknown' },
    { name: 'one node whose taints changed', left: left(true), want: 'Node' },
    { name: 'every node changed', left: left(true, true, true), want: 'Node' },
    { name: 'one node that did not change (the template stopped tolerating it)', left: left(false), want: 'Revision' },
    { name: 'one changed, one did not: the template is at fault for the other', left: left(true, false), want: 'Revision' },
    { name: 'not known whether the node changed', left: left(undefined), want: 'Unknown' },
    { name: 'one changed, one unknown', left: left(true, undefined), want: 'Unknown' },
    { name: 'one unchanged, one unknown', left: left(undefined, false), want: 'Revision' },
  ];
  for (const tc of cases) it(`${tc.name} → ${tc.want}`, () => assert.equal(attributeShrink(tc.left), tc.want));
});

// --- attribute: the rollout -------------------------------------------------------------------------------

/** A Ready node running `pods`. */
const readyNode = (name: string, pods: PodView[]): NodeView => withHealth(node(name, pods), health());
const onB = (name: string): NodeView => readyNode(name, [pod({ hash: HASH.B })]);
const onA = (name: string): NodeView => readyNode(name, [pod({ hash: HASH.A })]);

function input(nodes: NodeView[], o: Partial<Omit<AttributionInput, 'split' | 'nodes'>> = {}): AttributionInput {
  return {
    split: computeSplit(nodes, REVISIONS, HASH.B),
    nodes,
    minReadySeconds: 0,
    observed: true,
    incomplete: true,
    left: [],
    shrank: false,
    ...o,
  };
}

describe('attribute: the owner of the rollout', () => {
  const cases: {
    name: string;
    in: AttributionInput;
    owner: FaultOwner | '';
    cause: CauseClass | '';
    evidence: string[];
    /** node → owner for every blocked and empty node, when the case cares. */
    nodes?: Record<string, FaultOwner>;
  }[] = [
    {
      name: 'revision evidence on a Ready node wins over a node whose kubelet stopped',
      in: input([onB('node-1'), nodeWith('node-2', [notReadyPod(HASH.B)], deadKubelet()), readyNode('node-3', [imagePullPod(HASH.B)])]),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      evidence: ['node-3'],
      nodes: { 'node-2': 'Node', 'node-3': 'Revision' },
    },
    {
      name: 'a dead kubelet whose pods look failing, nothing else: the node',
      in: input([onB('node-1'), onB('node-2'), nodeWith('node-3', [crashLoopPod(HASH.B)], deadKubelet())]),
      owner: 'Node',
      cause: 'NodeNotReady',
      evidence: [],
      nodes: { 'node-3': 'Node' },
    },
    {
      name: 'a dead kubelet with the old pod stuck Terminating and no new pod: the node',
      in: input([onB('node-1'), onB('node-2'), nodeWith('node-3', [deletingPod(HASH.A, NOW - sec(600))], deadKubelet())]),
      owner: 'Node',
      cause: 'NodeNotReady',
      evidence: [],
      nodes: { 'node-3': 'Node' },
    },
    {
      name: 'the node before the control plane',
      in: input([
        nodeWith('node-1', [crashLoopPod(HASH.B)], deadKubelet()),
        readyNode('node-2', [unscheduledPod(HASH.B)]),
        readyNode('node-3', [unscheduledPod(HASH.B)]),
      ]),
      owner: 'Node',
      cause: 'NodeNotReady',
      evidence: [],
    },
    {
      name: 'the control plane before a configured wait',
      in: input(
        [readyNode('node-1', [unscheduledPod(HASH.B)]), readyNode('node-2', [waitingOutMinReadyPod(HASH.B, NOW - sec(1))]), onA('node-3')],
        { minReadySeconds: 12 },
      ),
      owner: 'ControlPlane',
      cause: 'SchedulerNotActing',
      evidence: [],
      nodes: { 'node-1': 'ControlPlane', 'node-2': 'ConfiguredWait' },
    },
    {
      name: 'a configured wait before the unknown',
      in: input([readyNode('node-1', []), readyNode('node-2', [waitingOutMinReadyPod(HASH.B, NOW - sec(1))]), onA('node-3')], {
        minReadySeconds: 12,
      }),
      owner: 'ConfiguredWait',
      cause: 'MinReadySeconds',
      evidence: [],
      nodes: { 'node-1': 'Unknown', 'node-2': 'ConfiguredWait' },
    },
    {
      name: 'a termination grace period is a configured wait',
      in: input([onB('node-1'), onB('node-2'), readyNode('node-3', [deletingPod(HASH.A, NOW + sec(20))])]),
      owner: 'ConfiguredWait',
      cause: 'PodTerminating',
      evidence: [],
    },
    {
      name: 'the kubelet not removing a pod past its grace period on a Ready node is the node',
      in: input([onB('node-1'), onB('node-2'), readyNode('node-3', [deletingPod(HASH.A, NOW - sec(20))])]),
      owner: 'Node',
      cause: 'PodTerminating',
      evidence: [],
    },
    {
      name: 'only nodes with nothing the API explains: Unknown',
      in: input([onB('node-1'), onB('node-2'), readyNode('node-3', [])]),
      owner: 'Unknown',
      cause: 'Unknown',
      evidence: [],
    },
    {
      name: 'within one owner the cause most nodes share wins (2 CrashLoop over 1 ImagePull)',
      in: input([
        readyNode('node-1', [crashLoopPod(HASH.B)]),
        readyNode('node-2', [crashLoopPod(HASH.B)]),
        readyNode('node-3', [imagePullPod(HASH.B)]),
      ]),
      owner: 'Revision',
      cause: 'CrashLoop',
      evidence: ['node-1', 'node-2', 'node-3'],
    },
    {
      name: 'a tie is broken by precedence (ImagePullFailure before CrashLoop)',
      in: input([onB('node-1'), readyNode('node-2', [crashLoopPod(HASH.B)]), readyNode('node-3', [imagePullPod(HASH.B)])]),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      evidence: ['node-2', 'node-3'],
    },
    {
      name: 'Insufficient cpu on a Ready node is the revision (it asks for more than the node has)',
      in: input([onB('node-1'), onB('node-2'), readyNode('node-3', [unschedulablePod(HASH.B, INSUFFICIENT_CPU)])]),
      owner: 'Revision',
      cause: 'InsufficientResources',
      evidence: ['node-3'],
    },
    {
      name: 'node causes by count: two under pressure outweigh one not Ready',
      in: input([
        nodeWith('node-1', [imagePullPod(HASH.B)], health({ pressure: ['DiskPressure'] })),
        nodeWith('node-2', [imagePullPod(HASH.B)], health({ pressure: ['DiskPressure'] })),
        nodeWith('node-3', [imagePullPod(HASH.B)], deadKubelet()),
      ]),
      owner: 'Node',
      cause: 'NodePressure',
      evidence: [],
    },
    {
      name: 'the controller has not observed the generation: the control plane, whatever the pods say',
      in: input([onA('node-1'), onA('node-2'), readyNode('node-3', [imagePullPod(HASH.B)])], { observed: false }),
      owner: 'ControlPlane',
      cause: 'ControllerNotObserving',
      evidence: ['node-3'],
    },
    {
      name: 'observed, incomplete, every node still on the old revision and none blocked: the controller is not acting',
      in: input([onA('node-1'), onA('node-2'), onA('node-3')]),
      owner: 'ControlPlane',
      cause: 'ControllerNotActing',
      evidence: [],
    },
    {
      name: 'nothing left to do (complete): no owner even if a node looks blocked',
      in: input([onB('node-1'), onB('node-2'), readyNode('node-3', [imagePullPod(HASH.B)])], { incomplete: false }),
      owner: '',
      cause: '',
      evidence: ['node-3'],
    },
    {
      name: 'a shrink by a node that was tainted: the node, no evidence against the revision',
      in: input([onB('node-1'), onB('node-2')], {
        shrank: true,
        left: [{ node: 'node-3', reason: 'untolerated taint x=y:NoExecute', nodeChanged: true }],
      }),
      owner: 'Node',
      cause: '',
      evidence: [],
    },
    {
      name: 'a shrink by a template that stopped tolerating an unchanged node: the revision, the node is the evidence',
      in: input([onB('node-1'), onB('node-2')], {
        shrank: true,
        left: [{ node: 'node-3', reason: 'untolerated taint x=y:NoExecute', nodeChanged: false }],
      }),
      owner: 'Revision',
      cause: '',
      evidence: ['node-3'],
    },
    {
      name: 'a shrink where one node changed and one did not: the revision, only the unchanged node is evidence',
      in: input([onB('node-1')], {
        shrank: true,
        left: [
          { node: 'node-2', reason: 'untolerated taint x=y:NoExecute', nodeChanged: true },
          { node: 'node-3', reason: 'untolerated taint x=y:NoExecute', nodeChanged: false },
        ],
      }),
      owner: 'Revision',
      cause: '',
      evidence: ['node-3'],
    },
    {
      name: 'a shrink by a dead node beside image pulls failing on Ready nodes: the revision, for what its pods say',
      in: input(
        [
          readyNode('node-1', [imagePullPod(HASH.B)]),
          readyNode('node-2', [imagePullPod(HASH.B)]),
          onA('node-3'),
          nodeWith('node-4', [], deadKubelet()),
        ],
        {
          shrank: true,
          left: [{ node: 'node-4', reason: 'untolerated taint node.kubernetes.io/unreachable:NoSchedule', nodeChanged: true }],
        },
      ),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      evidence: ['node-1', 'node-2'],
      nodes: { 'node-1': 'Revision', 'node-2': 'Revision', 'node-4': 'Node' },
    },
    {
      name: 'a shrink by a changed node beside an image pull failing on a Ready node: the revision, for its pods',
      in: input([readyNode('node-1', [imagePullPod(HASH.B)]), onB('node-2')], {
        shrank: true,
        left: [{ node: 'node-3', reason: 'untolerated taint x=y:NoExecute', nodeChanged: true }],
      }),
      owner: 'Revision',
      cause: 'ImagePullFailure',
      evidence: ['node-1'],
    },
    {
      name: 'a shrink by the template beside an image pull failing on a Ready node: the revision, for the shrink',
      in: input([readyNode('node-1', [imagePullPod(HASH.B)]), onB('node-2')], {
        shrank: true,
        left: [{ node: 'node-3', reason: 'untolerated taint x=y:NoExecute', nodeChanged: false }],
      }),
      owner: 'Revision',
      cause: '',
      evidence: ['node-1', 'node-3'],
    },
    {
      name: 'a shrink where it is not known whether the node changed: Unknown',
      in: input([onB('node-1'), onB('node-2')], { shrank: true, left: [{ node: 'node-3', reason: 'no longer selected' }] }),
      owner: 'Unknown',
      cause: '',
      evidence: [],
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.owner || "''"}/${tc.cause || "''"}`, () => {
      const a = attribute(tc.in, NOW);
      assert.equal(a.owner, tc.owner);
      assert.equal(a.cause, tc.cause);
      assert.deepEqual(a.revisionEvidence, tc.evidence);
      assert.equal(a.blocked.length, tc.in.split.blocked.length, 'every blocked node is attributed');
      assert.equal(a.empty.length, tc.in.split.empty.length, 'every empty node is attributed');
      for (const x of [...a.blocked, ...a.empty]) assert.ok(x.owner && x.cause, `${x.node} has an owner and a cause`);
      if (tc.nodes) {
        const got = Object.fromEntries([...a.blocked, ...a.empty].map((x) => [x.node, x.owner]));
        assert.deepEqual(got, tc.nodes);
      }
    });
  }

  it('is a pure function of its input: the same input twice gives the same answer, and the input is untouched', () => {
    const i = input([onB('node-1'), nodeWith('node-2', [notReadyPod(HASH.B)], deadKubelet()), readyNode('node-3', [imagePullPod(HASH.B)])]);
    const copy = structuredClone(i);
    assert.deepEqual(attribute(i, NOW), attribute(structuredClone(i), NOW));
    assert.deepEqual(i, copy);
  });
});

describe('attribute: waitEndsAt (the end of the minReadySeconds wait, so the wait is not counted as idle)', () => {
  const since = (s: number): PodView => waitingOutMinReadyPod(HASH.B, NOW - sec(s));
  const cases: { name: string; nodes: NodeView[]; minReadySeconds: number; want: number | undefined }[] = [
    {
      name: 'minReadySeconds 0: no wait',
      nodes: [readyNode('node-1', [pod({ hash: HASH.B, readySince: new Date(NOW - sec(1)).toISOString() })])],
      minReadySeconds: 0,
      want: undefined,
    },
    {
      name: 'a pod 4 s into a 12 s wait: the wait is still on, it ends no earlier than now',
      nodes: [readyNode('node-1', [since(4)])],
      minReadySeconds: 12,
      want: NOW,
    },
    {
      name: 'a pod ready for 20 s: its wait ended 8 s ago',
      nodes: [readyNode('node-1', [pod({ hash: HASH.B, readySince: new Date(NOW - sec(20)).toISOString() })])],
      minReadySeconds: 12,
      want: NOW - sec(8),
    },
    {
      name: 'the latest wait over all nodes',
      nodes: [
        readyNode('node-1', [pod({ hash: HASH.B, readySince: new Date(NOW - sec(30)).toISOString() })]),
        readyNode('node-2', [pod({ hash: HASH.B, readySince: new Date(NOW - sec(15)).toISOString() })]),
      ],
      minReadySeconds: 12,
      want: NOW - sec(3),
    },
    {
      name: 'pods of the old revision do not count',
      nodes: [readyNode('node-1', [pod({ hash: HASH.A, readySince: new Date(NOW - sec(1)).toISOString() })])],
      minReadySeconds: 12,
      want: undefined,
    },
    {
      name: 'pods that are not ready do not count',
      nodes: [readyNode('node-1', [{ ...notReadyPod(HASH.B), readySince: new Date(NOW - sec(1)).toISOString() }])],
      minReadySeconds: 12,
      want: undefined,
    },
    {
      name: 'an old pod in its termination grace period is a configured wait too: it ends no earlier than now',
      nodes: [readyNode('node-1', [{ ...since(1), deleting: true, deletionAt: new Date(NOW + sec(30)).toISOString() }])],
      minReadySeconds: 12,
      want: NOW,
    },
    {
      name: 'a ready pod not yet available, readySince unknown: still waiting, so now',
      nodes: [readyNode('node-1', [pod({ hash: HASH.B, ready: true, available: false })])],
      minReadySeconds: 12,
      want: NOW,
    },
    {
      name: 'a pod that restarted does not hold the clock, whatever its readiness',
      nodes: [readyNode('node-1', [{ ...since(4), restartCount: 2 }])],
      minReadySeconds: 12,
      want: undefined,
    },
    { name: 'no pods at all', nodes: [readyNode('node-1', [])], minReadySeconds: 12, want: undefined },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.want === undefined ? 'undefined' : `now${tc.want === NOW ? '' : ` - ${(NOW - tc.want) / 1000}s`}`}`, () => {
      const a = attribute(input(tc.nodes, { minReadySeconds: tc.minReadySeconds }), NOW);
      assert.equal(a.waitEndsAt, tc.want);
      if (tc.want === undefined) assert.ok(!('waitEndsAt' in a), 'absent rather than undefined, so status diffs stay clean');
    });
  }
});

describe('attribute: a node that is down and still runs the previous revision', () => {
  it("is named as the node's fault, not left to look like a controller that does nothing", () => {
    const nodes = [onB('node-1'), onA('node-2'), nodeWith('node-3', [pod({ hash: HASH.A, ready: false })], deadKubelet())];
    const a = attribute(input(nodes), NOW);
    assert.equal(a.owner, 'Node');
    assert.equal(a.cause, 'NodeNotReady');
    const b = a.blocked.find((x) => x.node === 'node-3');
    assert.equal(b?.owner, 'Node');
    assert.match(b?.message ?? '', /still runs the previous revision/);
    assert.ok(!a.blocked.some((x) => x.node === 'node-2'), 'a healthy node waiting its turn is not blocked');
  });

  it('the revision failing on a Ready node still decides', () => {
    const nodes = [readyNode('node-1', [imagePullPod(HASH.B)]), nodeWith('node-3', [pod({ hash: HASH.A, ready: false })], deadKubelet())];
    const a = attribute(input(nodes), NOW);
    assert.equal(a.owner, 'Revision');
    assert.deepEqual(a.revisionEvidence, ['node-1']);
  });
});
