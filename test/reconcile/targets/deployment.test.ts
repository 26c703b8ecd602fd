/**
 * The Deployment gather adapter through a fake CacheView: units are the pods of its ReplicaSets, named by
 * the pod and judged on its node; its ReplicaSets are its revisions; its counters are its controller's,
 * with the old pods still running said apart; spec.paused, its own ProgressDeadlineExceeded and the
 * Recreate strategy become kind-neutral facts; its ReplicaSet's FailedCreate (or ReplicaFailure) explains
 * pods that do not exist; pods not cached yet end the pass (PodsPending).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimDeployment, SlimEvent, SlimNode, SlimPod, SlimReplicaSet } from '../../../src/api/objects.js';
import type { GuardStatus } from '../../../src/api/types.js';
import type { Observation } from '../../../src/domain/observation.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { TargetMemory } from '../../../src/reconcile/targetMemory.js';
import { deploymentCounters, observeDeployment } from '../../../src/reconcile/targets/deployment.js';
import type { PodsPending } from '../../../src/reconcile/targets/shared.js';
import { holding } from '../../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const LONG_READY = '2025-12-31T23:00:00Z';

interface DeployOptions {
  replicas?: number;
  strategy?: 'RollingUpdate' | 'Recreate';
  paused?: boolean;
  /** The live template's digest: the new ReplicaSet's (`tpl-bbb`) unless told. */
  digest?: string;
  status?: Partial<SlimDeployment['status']>;
}

/** Deployment `web` in `ns`: 3 replicas on ReplicaSet web-bbb (revision 2), every pod updated and available, unless told. */
function deploy(o: DeployOptions = {}): SlimDeployment {
  const replicas = o.replicas ?? 3;
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'deploy-uid', generation: 2 },
    spec: {
      replicas,
      strategy: { type: o.strategy ?? 'RollingUpdate' },
      minReadySeconds: 0,
      progressDeadlineSeconds: 600,
      paused: o.paused ?? false,
      images: ['web:2'],
      templateDigest: o.digest ?? 'tpl-bbb',
    },
    status: {
      observedGeneration: 2,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      unavailableReplicas: 0,
      ...o.status,
    },
  };
}

/** ReplicaSet `web-<hash>` of the Deployment (or of `owner`), revision `revision`. */
function replicaSet(hash: string, revision: number, o: Partial<SlimReplicaSet> = {}, owner = 'deploy-uid'): SlimReplicaSet {
  return {
    metadata: {
      name: `web-${hash}`,
      namespace: 'ns',
      uid: `rs-${hash}`,
      creationTimestamp: '2025-12-31T00:00:00Z',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }],
    },
    hash,
    revision,
    replicas: 3,
    current: 3,
    ready: 3,
    available: 3,
    templateDigest: `tpl-${hash}`,
    ...o,
  };
}

/** Pod `web-<hash>-<suffix>` of ReplicaSet web-<hash>, on `node` (unscheduled without one), Ready since `readySince` if given. */
function rsPod(hash: string, suffix: string, node?: string, readySince?: string, deleting?: string): SlimPod {
  return {
    metadata: {
      name: `web-${hash}-${suffix}`,
      namespace: 'ns',
      creationTimestamp: '2025-12-31T22:00:00Z',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${hash}`, uid: `rs-${hash}`, controller: true }],
      ...(deleting ? { deletionTimestamp: deleting } : {}),
    },
    ...(node ? { node } : {}),
    scheduled: node !== undefined,
    hash,
    images: [`web:${hash}`],
    phase: node ? 'Running' : 'Pending',
    ready: readySince !== undefined,
    ...(readySince ? { readySince } : {}),
    restartCount: 0,
  };
}

const node = (name: string, health: SlimNode['health'] = { ready: 'True' }): SlimNode => ({ metadata: { name }, taints: [], health });
const NODES = [node('n1'), node('n2'), node('n3', { ready: 'Unknown', reason: 'NodeStatusUnknown' })];
const RS = [replicaSet('aaa', 1, { replicas: 0, current: 0, ready: 0, available: 0 }), replicaSet('bbb', 2)];

/**
 * A cache holding `d`, its ReplicaSets `sets` and their `pods` (pods are asked for by ReplicaSet UID,
 * within the Deployment's watch); `extra` adds or replaces any method. `asked` records each pod lookup.
 */
function world(
  d: SlimDeployment | undefined,
  sets: SlimReplicaSet[],
  pods: SlimPod[],
  extra: Partial<CacheView> = {},
  asked: string[] = [],
): CacheView {
  return {
    workload: holding(d ? { Deployment: d } : {}, { namespace: 'ns', name: 'web' }),
    podsOwnedBy: (uid, within) => {
      asked.push(`${uid} within ${String(within)}`);
      return pods.filter((p) => p.metadata.ownerReferences?.[0]?.uid === uid);
    },
    revisionsOwnedBy: () => [],
    replicaSetsOwnedBy: (uid) => sets.filter((rs) => rs.metadata.ownerReferences?.[0]?.uid === uid),
    nodes: () => NODES,
    ...extra,
  };
}

const observe = (c: CacheView, status?: GuardStatus): Observation | PodsPending =>
  observeDeployment(c, new TargetMemory(), 'ns', 'web', NOW, status);

/** The observation of an existing target, or a failed assertion. */
function target(o: Observation | PodsPending): Extract<Observation, { kind: 'Target' }> {
  assert.equal(o.kind, 'Target', JSON.stringify(o));
  return o;
}

const rolling = { replicas: 4, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1 };
const midway = [
  rsPod('aaa', 'x1', 'n1', LONG_READY),
  rsPod('aaa', 'x2', 'n2', LONG_READY),
  rsPod('bbb', 'y1', 'n2', LONG_READY),
  rsPod('bbb', 'y2', 'n3'),
];

describe('deploymentCounters', () => {
  it("reads the controller's counters as kubectl get deploy shows them", () => {
    assert.deepEqual(deploymentCounters(deploy({ status: rolling })), {
      generation: 2,
      observedGeneration: 2,
      desired: 3,
      current: 4,
      updated: 2,
      ready: 3,
      available: 3,
      misscheduled: 0,
    });
  });
});

describe('observeDeployment: the target', () => {
  it('is TargetMissing when the cache has no Deployment, or one without a UID', () => {
    const missing = { kind: 'TargetMissing', targetName: 'web' };
    assert.deepEqual(observe(world(undefined, RS, [])), missing);
    const d = deploy();
    assert.deepEqual(observe(world({ ...d, metadata: { ...d.metadata, uid: '' } }, RS, [])), missing);
  });

  it('reads its ReplicaSets as its revisions, newest first, and the one storing the live template as current', () => {
    const other = replicaSet('zzz', 9, {}, 'someone-else');
    const o = target(observe(world(deploy({ status: rolling }), [...RS, other], midway)));
    assert.deepEqual(
      o.revisions.map((r) => [r.name, r.hash, r.revision]),
      [
        ['web-bbb', 'bbb', 2],
        ['web-aaa', 'aaa', 1],
      ],
    );
    assert.equal(o.currentRevision?.name, 'web-bbb');
  });

  it('has the old pods still running said apart (outdated), and none once they are gone', () => {
    assert.equal(target(observe(world(deploy({ status: rolling }), RS, midway))).target.outdated, 2);
    assert.equal(target(observe(world(deploy(), RS, []))).target.outdated, undefined);
  });

  it('tells RollingUpdate from Recreate', () => {
    assert.equal(target(observe(world(deploy(), RS, []))).target.strategy, 'RollingUpdate');
    assert.equal(target(observe(world(deploy({ strategy: 'Recreate' }), RS, []))).target.strategy, 'Recreate');
  });
});

describe('observeDeployment: its pods are its units', () => {
  it('names each unit by its pod, with the node it runs on and that node health, asking by ReplicaSet within the Deployment', () => {
    const asked: string[] = [];
    const o = target(observe(world(deploy({ status: rolling }), RS, midway, {}, asked)));
    assert.deepEqual(asked.sort(), ['rs-aaa within deploy-uid', 'rs-bbb within deploy-uid']);
    assert.deepEqual(
      o.nodes.map((u) => [u.node, u.host, u.health?.ready, u.eligible, u.pods.map((p) => `${p.name}:${p.hash}:${p.available}`)]),
      [
        ['web-aaa-x1', 'n1', 'True', true, ['web-aaa-x1:aaa:true']],
        ['web-aaa-x2', 'n2', 'True', true, ['web-aaa-x2:aaa:true']],
        ['web-bbb-y1', 'n2', 'True', true, ['web-bbb-y1:bbb:true']],
        ['web-bbb-y2', 'n3', 'Unknown', true, ['web-bbb-y2:bbb:false']],
      ],
    );
    assert.deepEqual(o.leftNodes, []);
  });

  it('leaves an unscheduled pod without a host, and skips a pod without its hash label', () => {
    const pods = [rsPod('bbb', 'p1'), { ...rsPod('bbb', 'p2', 'n1'), hash: '' }];
    const o = target(observe(world(deploy({ status: rolling }), RS, pods)));
    assert.deepEqual(
      o.nodes.map((u) => [u.node, u.host]),
      [['web-bbb-p1', undefined]],
    );
  });

  it('waits for a pod being deleted only under Recreate: in a rolling update it only leaves', () => {
    const pods = [rsPod('aaa', 'old', 'n1', undefined, '2026-01-01T00:00:30Z')];
    const rollingUnit = target(observe(world(deploy({ status: rolling }), RS, pods))).nodes[0]!;
    assert.equal(rollingUnit.eligible, false);
    assert.match(rollingUnit.ineligibleReason ?? '', /does not wait/);
    const recreateUnit = target(observe(world(deploy({ strategy: 'Recreate', status: rolling }), RS, pods))).nodes[0]!;
    assert.equal(recreateUnit.eligible, true);
    assert.equal(recreateUnit.ineligibleReason, undefined);
  });

  it('ends the pass while its pods are needed and not cached yet, and asks for them', () => {
    const wanted: string[] = [];
    const o = observe(
      world(deploy({ status: rolling }), RS, midway, {
        podCache: () => 'syncing',
        wantPods: (kind, ns, name) => wanted.push(`${kind} ${ns}/${name}`),
      }),
    );
    assert.deepEqual(o, { kind: 'PodsPending', target: 'web' });
    assert.deepEqual(wanted, ['Deployment ns/web']);
  });

  it('judges a settled Deployment whose pods are not cached from its counters, with no unit', () => {
    const o = target(observe(world(deploy(), RS, midway, { podCache: () => 'off' })));
    assert.equal(o.podsFromCounters, true);
    assert.deepEqual(o.nodes, []);
  });
});

describe('observeDeployment: what only its spec and controller say', () => {
  it('says a pause by its spec, and how to resume; a changed template no ReplicaSet stores yet is not a cache behind', () => {
    const paused = target(observe(world(deploy({ paused: true }), RS, []))).target;
    assert.match(
      paused.pausedBySpec ?? '',
      /^spec\.paused is true \(kubectl rollout pause\).*kubectl rollout resume deployment\/web -n ns$/,
    );
    assert.equal(paused.templateDigest, 'tpl-bbb');
    const changed = target(observe(world(deploy({ paused: true, digest: 'tpl-new' }), RS, []))).target;
    assert.equal(changed.templateDigest, undefined, 'the live template waits for the resume: no digest to disagree with');
    assert.match(changed.pausedBySpec ?? '', /its changed template waits for the resume$/);
    assert.equal(changed.templateAwaitsResume, true);
    assert.equal(paused.templateAwaitsResume, undefined, 'paused on the template its ReplicaSet stores');
    const running = target(observe(world(deploy({ digest: 'tpl-new' }), RS, []))).target;
    assert.equal(running.pausedBySpec, undefined);
    assert.equal(running.templateDigest, 'tpl-new', 'not paused: a template no ReplicaSet stores is a cache behind');
  });

  it('reads its own ProgressDeadlineExceeded, with its deadline and words, and nothing else of its Progressing condition', () => {
    const exceeded = {
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "web-bbb" has timed out progressing.',
      since: '2025-12-31T23:50:00Z',
    };
    const d = deploy({ status: { ...rolling, progressing: exceeded } });
    d.spec.progressDeadlineSeconds = 30;
    assert.deepEqual(target(observe(world(d, RS, midway))).target.ownDeadlineExceeded, {
      seconds: 30,
      message: 'ReplicaSet "web-bbb" has timed out progressing.',
      since: '2025-12-31T23:50:00Z',
    });
    for (const progressing of [
      { status: 'True', reason: 'ReplicaSetUpdated', message: 'progressing' },
      { status: 'Unknown', reason: 'DeploymentPaused', message: 'paused' },
    ]) {
      const o = target(observe(world(deploy({ status: { ...rolling, progressing } }), RS, midway)));
      assert.equal(o.target.ownDeadlineExceeded, undefined, progressing.reason);
    }
  });

  it("explains missing pods by the live template's ReplicaSet's latest FailedCreate, else its ReplicaFailure condition", () => {
    const quota: SlimEvent = {
      metadata: { name: 'e1', namespace: 'ns' },
      involved: { kind: 'ReplicaSet', name: 'web-bbb', namespace: 'ns' },
      reason: 'FailedCreate',
      message: 'Error creating: pods "web-bbb-z" is forbidden: exceeded quota: pods, requested: pods=1',
      at: '2025-12-31T23:59:00Z',
    };
    const about: string[] = [];
    const warnings: CacheView['warningsFor'] = (kind, ns, name) => {
      about.push(`${kind} ${ns}/${name}`);
      return name === 'web-bbb' && kind === 'Deployment' ? [quota] : [];
    };
    const o = target(observe(world(deploy({ status: rolling }), RS, midway, { warningsFor: warnings })));
    assert.deepEqual(o.target.warning, { reason: 'FailedCreate', message: quota.message, at: quota.at });
    assert.ok(about.includes('Deployment ns/web-bbb'), about.join(', '));

    const failing = [
      RS[0]!,
      replicaSet('bbb', 2, { replicaFailure: { reason: 'FailedCreate', message: 'forbidden', since: '2025-12-31T23:58:00Z' } }),
    ];
    const fromCondition = target(observe(world(deploy({ status: rolling }), failing, midway)));
    assert.deepEqual(fromCondition.target.warning, { reason: 'FailedCreate', message: 'forbidden', at: '2025-12-31T23:58:00Z' });
    assert.equal(target(observe(world(deploy({ status: rolling }), RS, midway))).target.warning, undefined);
  });

  it('reads the undo opt-out and a controller owner as for every kind', () => {
    const d = deploy();
    d.metadata.annotations = { 'rolloutguard.dev/undo': 'disabled' };
    d.metadata.ownerReferences = [{ apiVersion: 'example.dev/v1', kind: 'App', name: 'shop', uid: 'u', controller: true }];
    const t = target(observe(world(d, RS, []))).target;
    assert.equal(t.undoOptOut, true);
    assert.deepEqual(t.owner, { kind: 'App', name: 'shop' });
  });

  it("names Flagger's Canary as its manager when the Canary controls its <name>-primary copy, and nothing else does", () => {
    const primary = (ownerKind: string): SlimDeployment => {
      const p = deploy();
      p.metadata = {
        ...p.metadata,
        name: 'web-primary',
        uid: 'primary-uid',
        ownerReferences: [{ apiVersion: 'flagger.app/v1beta1', kind: ownerKind, name: 'web', uid: 'c', controller: true }],
      };
      return p;
    };
    const withPrimary = (p: SlimDeployment | undefined): CacheView =>
      world(deploy(), RS, [], {
        workload: ((kind: string, ns: string, name: string) =>
          kind === 'Deployment' && ns === 'ns'
            ? name === 'web'
              ? deploy()
              : name === 'web-primary'
                ? p
                : undefined
            : undefined) as CacheView['workload'],
      });
    assert.deepEqual(target(observe(withPrimary(primary('Canary')))).target.owner, { kind: 'Canary', name: 'web' });
    assert.equal(target(observe(withPrimary(primary('App')))).target.owner, undefined, 'a -primary copy another controller owns');
    assert.equal(target(observe(withPrimary(undefined))).target.owner, undefined, 'no -primary copy');
  });
});
