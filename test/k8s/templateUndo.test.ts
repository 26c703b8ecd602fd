/**
 * TemplateUndo against a small local HTTP API: the fresh read before the patch refuses when the world
 * no longer justifies the undo, and the patch sends the template plus the operator's record annotation.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { UNDO_RECORD_ANNOTATION } from '../../src/api/names.js';
import type { UndoRequest } from '../../src/domain/undo.js';
import { TemplateUndo } from '../../src/k8s/templateUndo.js';
import { templateDigest } from '../../src/k8s/slim.js';
import { clientFor, listenLocal } from '../support/localApi.js';

const NS = 'ns1';
const GOOD = { metadata: { labels: { app: 'decoder' } }, spec: { containers: [{ name: 'decoder', image: 'decoder:1' }] } };
const BROKEN = { metadata: { labels: { app: 'decoder' } }, spec: { containers: [{ name: 'decoder', image: 'decoder:2-broken' }] } };

interface World {
  ds: Record<string, unknown>;
  patches: Array<{ body: Record<string, unknown>; query: string }>;
  /** 409 this many patches before accepting. */
  conflicts: number;
  /** The ControllerRevision decoder-aaa as the API server returns it. */
  revision: Record<string, unknown>;
}

/** The revision the DaemonSet controller writes: controlled by the DaemonSet, labelled with its hash. */
function controllerRevision(o: { ownerUid?: string; ownerKind?: string; hash?: string; data?: unknown } = {}): Record<string, unknown> {
  return {
    metadata: {
      name: 'decoder-aaa',
      labels: { 'controller-revision-hash': o.hash ?? 'aaa' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: o.ownerKind ?? 'DaemonSet', name: 'decoder', uid: o.ownerUid ?? 'uid-1', controller: true },
      ],
    },
    revision: 1,
    data: o.data ?? { spec: { template: { ...GOOD, $patch: 'replace' } } },
  };
}

function daemonSet(
  o: {
    template?: unknown;
    annotations?: Record<string, string>;
    owners?: unknown[];
    status?: Record<string, number>;
    generation?: number;
  } = {},
): Record<string, unknown> {
  return {
    metadata: {
      name: 'decoder',
      namespace: NS,
      uid: 'uid-1',
      resourceVersion: '42',
      generation: o.generation ?? 2,
      annotations: { 'deprecated.daemonset.template.generation': '2', ...o.annotations },
      ...(o.owners ? { ownerReferences: o.owners } : {}),
    },
    spec: { template: o.template ?? BROKEN },
    status: { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 1, numberAvailable: 2, ...o.status },
  };
}

function serve(world: World): http.RequestListener {
  return (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (code: number, payload: unknown): void => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (url.pathname === `/apis/apps/v1/namespaces/${NS}/controllerrevisions/decoder-aaa`) {
        return json(200, world.revision);
      }
      if (url.pathname === `/apis/apps/v1/namespaces/${NS}/daemonsets/decoder`) {
        if (req.method === 'GET') return json(200, world.ds);
        if (req.method === 'PATCH') {
          world.patches.push({ body: JSON.parse(body) as Record<string, unknown>, query: url.search });
          if (world.conflicts > 0) {
            world.conflicts--;
            return json(409, {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              reason: 'Conflict',
              code: 409,
              message: 'the object has been modified',
            });
          }
          return json(200, world.ds);
        }
      }
      return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' });
    });
  };
}

const REQ: UndoRequest = {
  kind: 'DaemonSet',
  namespace: NS,
  name: 'decoder',
  toRevisionName: 'decoder-aaa',
  expectedUid: 'uid-1',
  expectedTemplateGeneration: '2',
  fromHash: 'bbb',
  toHash: 'aaa',
  record: { from: 'bbb', to: 'aaa', at: '2026-01-01T00:00:00.000Z', guard: `${NS}/decoder` },
};

describe('TemplateUndo', () => {
  const world: World = { ds: daemonSet(), patches: [], conflicts: 0, revision: controllerRevision() };
  const server = http.createServer(serve(world));
  let undo: TemplateUndo;

  before(async () => {
    await listenLocal(server);
    undo = new TemplateUndo(clientFor(server));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    world.ds = daemonSet();
    world.patches = [];
    world.conflicts = 0;
    world.revision = controllerRevision();
  });

  it('applies: one strategic-merge patch of spec.template, the resourceVersion read, and the undo record annotation', async () => {
    assert.deepEqual(await undo.undo(REQ), { kind: 'Applied' });
    assert.equal(world.patches.length, 1);
    const p = world.patches[0]!.body as {
      spec: { template: unknown };
      metadata: { resourceVersion: string; annotations: Record<string, string> };
    };
    assert.deepEqual(Object.keys(p).sort(), ['metadata', 'spec']);
    assert.deepEqual(Object.keys(p.spec), ['template']);
    assert.equal(p.metadata.resourceVersion, '42');
    assert.deepEqual(JSON.parse(p.metadata.annotations[UNDO_RECORD_ANNOTATION]!), { ...REQ.record, undone: ['bbb'] });
  });

  it("the record keeps every hash undone on this DaemonSet, the earlier record's included", async () => {
    world.ds = daemonSet({
      annotations: {
        [UNDO_RECORD_ANNOTATION]: JSON.stringify({ from: 'ccc', to: 'aaa', at: 'then', guard: `${NS}/x`, undone: ['ddd', 'ccc'] }),
      },
    });
    assert.deepEqual(await undo.undo(REQ), { kind: 'Applied' });
    const p = world.patches[0]!.body as { metadata: { annotations: Record<string, string> } };
    assert.deepEqual((JSON.parse(p.metadata.annotations[UNDO_RECORD_ANNOTATION]!) as { undone: string[] }).undone, ['ddd', 'ccc', 'bbb']);
  });

  const refusals: Array<{ name: string; ds: Record<string, unknown>; want: string; detail?: RegExp }> = [
    { name: 'already at the target template: success recorded, nothing sent', ds: daemonSet({ template: GOOD }), want: 'AlreadyAtTarget' },
    {
      name: 'another UID (deleted and recreated)',
      ds: { ...daemonSet(), metadata: { ...(daemonSet().metadata as object), uid: 'uid-2' } },
      want: 'TemplateChanged',
      detail: /recreated/,
    },
    { name: 'opted out since the decision', ds: daemonSet({ annotations: { 'rolloutguard.dev/undo': 'disabled' } }), want: 'OptedOut' },
    {
      name: 'a controller owns it (its owner would revert the undo)',
      ds: daemonSet({
        owners: [{ apiVersion: 'nvidia.com/v1', kind: 'ClusterPolicy', name: 'cluster-policy', uid: 'o1', controller: true }],
      }),
      want: 'NotUndone',
      detail: /ClusterPolicy\/cluster-policy/,
    },
    {
      name: 'another guard already undid this broken revision (the record on the DaemonSet)',
      ds: daemonSet({
        annotations: { [UNDO_RECORD_ANNOTATION]: JSON.stringify({ from: 'bbb', to: 'aaa', at: 'then', guard: `${NS}/other` }) },
      }),
      want: 'NotUndone',
      detail: /already undone .* by RolloutGuard ns1\/other/,
    },
    {
      name: "this broken revision is in the record's history, though a later undo replaced its `from`",
      ds: daemonSet({
        annotations: {
          [UNDO_RECORD_ANNOTATION]: JSON.stringify({ from: 'ccc', to: 'aaa', at: 'then', guard: `${NS}/other`, undone: ['bbb', 'ccc'] }),
        },
      }),
      want: 'NotUndone',
      detail: /bbb was already undone \(the record on the DaemonSet\)/,
    },
    {
      name: 'the template generation moved (a person is acting)',
      ds: daemonSet({ annotations: { 'deprecated.daemonset.template.generation': '3' } }),
      want: 'TemplateChanged',
      detail: /2 became 3/,
    },
    {
      name: 'the rollout completed meanwhile',
      ds: daemonSet({ status: { updatedNumberScheduled: 3, numberAvailable: 3 } }),
      want: 'NotUndone',
      detail: /completed before the undo/,
    },
  ];
  for (const tc of refusals) {
    it(`refuses, sending nothing: ${tc.name}`, async () => {
      world.ds = tc.ds;
      const out = await undo.undo(REQ);
      assert.equal(out.kind, tc.want);
      if (tc.detail) assert.match('detail' in out ? out.detail : '', tc.detail);
      assert.equal(world.patches.length, 0);
    });
  }

  it('counters of a generation the controller has not observed do not count as complete', async () => {
    world.ds = daemonSet({
      generation: 3,
      status: { observedGeneration: 2, updatedNumberScheduled: 3, numberAvailable: 3 },
      annotations: {},
    });
    assert.deepEqual(await undo.undo(REQ), { kind: 'Applied' });
  });

  it('a 409 re-reads and re-checks, and succeeds within the bound', async () => {
    world.conflicts = 1;
    assert.deepEqual(await undo.undo(REQ), { kind: 'Applied' });
    assert.equal(world.patches.length, 2);
  });

  it('a DaemonSet that changes under every attempt is not raced: NotUndone after the bound, each attempt re-read', async () => {
    world.conflicts = 100;
    const out = await undo.undo(REQ);
    assert.equal(out.kind, 'NotUndone');
    assert.match('detail' in out ? out.detail : '', /changed under each of 5 attempts/);
    assert.equal(world.patches.length, 5);
  });

  describe('the revision is checked before anything is copied from it, and only its template is sent', () => {
    const suspicious: Array<{ name: string; revision: Record<string, unknown>; detail: RegExp }> = [
      {
        name: 'controlled by another DaemonSet (another UID)',
        revision: controllerRevision({ ownerUid: 'uid-other' }),
        detail: /not controlled by this DaemonSet/,
      },
      {
        name: 'controlled by something that is not a DaemonSet',
        revision: controllerRevision({ ownerKind: 'StatefulSet' }),
        detail: /not controlled by this DaemonSet/,
      },
      {
        name: 'no controller at all',
        revision: { ...controllerRevision(), metadata: { name: 'decoder-aaa', labels: { 'controller-revision-hash': 'aaa' } } },
        detail: /its controller is none/,
      },
      {
        name: 'a hash label other than the decision named',
        revision: controllerRevision({ hash: 'zzz' }),
        detail: /carries hash zzz, not the aaa/,
      },
      {
        name: 'no pod template in its data',
        revision: controllerRevision({ data: { spec: { updateStrategy: { type: 'OnDelete' } } } }),
        detail: /holds no pod template/,
      },
    ];
    for (const tc of suspicious) {
      it(`refuses a revision ${tc.name}: Failed, nothing sent`, async () => {
        world.revision = tc.revision;
        const out = await undo.undo(REQ);
        assert.equal(out.kind, 'Failed');
        assert.match('detail' in out ? out.detail : '', tc.detail);
        assert.equal(world.patches.length, 0);
      });
    }

    it('fields a revision carries besides spec.template are never sent', async () => {
      world.revision = controllerRevision({
        data: {
          metadata: { annotations: { injected: 'yes' }, labels: { owner: 'attacker' } },
          spec: {
            template: { ...GOOD, $patch: 'replace' },
            updateStrategy: { type: 'OnDelete' },
            selector: { matchLabels: { app: 'other' } },
          },
          status: { numberReady: 0 },
        },
      });
      assert.deepEqual(await undo.undo(REQ), { kind: 'Applied' });
      const p = world.patches[0]!.body as { spec: Record<string, unknown>; metadata: Record<string, unknown> };
      assert.deepEqual(Object.keys(p).sort(), ['metadata', 'spec']);
      assert.deepEqual(Object.keys(p.spec), ['template'], 'only the template');
      assert.deepEqual(p.spec.template, { ...GOOD, $patch: 'replace' });
      assert.deepEqual(
        Object.keys(p.metadata).sort(),
        ['annotations', 'resourceVersion'],
        "only the precondition and the operator's own record",
      );
      assert.deepEqual(Object.keys(p.metadata.annotations as object), [UNDO_RECORD_ANNOTATION]);
    });

    it('the dry run checks the revision the same way', async () => {
      world.revision = controllerRevision({ ownerUid: 'uid-other' });
      const out = await undo.dryRun('DaemonSet', NS, 'decoder', 'decoder-aaa');
      assert.equal(out.kind, 'Rejected');
      assert.equal(world.patches.length, 0);
    });
  });
});

/**
 * A Deployment is undone from a ReplicaSet, as `kubectl rollout undo deployment` does: the ReplicaSet's
 * template without its `pod-template-hash` label, and a Deployment whose template moved since the decision
 * (a fix pushed forward) is never overwritten.
 */
describe('TemplateUndo of a Deployment, from its ReplicaSet', () => {
  const HASH_LABEL = 'pod-template-hash';
  const withHash = (t: typeof GOOD): Record<string, unknown> => ({
    ...t,
    metadata: { labels: { ...t.metadata.labels, [HASH_LABEL]: 'aaa' } },
  });
  const replicaSet = (o: { ownerKind?: string; hash?: string; template?: unknown } = {}): Record<string, unknown> => ({
    metadata: {
      name: 'decoder-aaa',
      labels: { app: 'decoder', [HASH_LABEL]: o.hash ?? 'aaa' },
      annotations: { 'deployment.kubernetes.io/revision': '1' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: o.ownerKind ?? 'Deployment', name: 'decoder', uid: 'uid-1', controller: true }],
    },
    spec: { replicas: 0, template: o.template ?? withHash(GOOD) },
  });
  const deployment = (template: unknown = BROKEN): Record<string, unknown> => ({
    metadata: { name: 'decoder', namespace: NS, uid: 'uid-1', resourceVersion: '7', generation: 2 },
    spec: { replicas: 3, template },
    status: { observedGeneration: 2, replicas: 4, updatedReplicas: 1, availableReplicas: 3 },
  });
  const world = {
    rs: replicaSet(),
    deploy: deployment(),
    patches: [] as Array<{ body: Record<string, unknown>; query: string }>,
    /** Argo Rollouts in the namespace; undefined: the API does not serve them (404); 'forbidden': 403. */
    rollouts: undefined as Array<Record<string, unknown>> | 'forbidden' | undefined,
  };
  const rollout = (name: string, ref: Record<string, unknown>): Record<string, unknown> => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name, namespace: NS },
    spec: { replicas: 3, workloadRef: ref, strategy: { canary: {} } },
  });
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (code: number, payload: unknown): void => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (url.pathname === `/apis/apps/v1/namespaces/${NS}/replicasets/decoder-aaa`) return json(200, world.rs);
      if (url.pathname === `/apis/argoproj.io/v1alpha1/namespaces/${NS}/rollouts` && world.rollouts !== undefined) {
        if (world.rollouts === 'forbidden')
          return json(403, {
            kind: 'Status',
            status: 'Failure',
            reason: 'Forbidden',
            code: 403,
            message: 'rollouts.argoproj.io is forbidden',
          });
        return json(200, { kind: 'RolloutList', items: world.rollouts });
      }
      if (url.pathname === `/apis/apps/v1/namespaces/${NS}/deployments/decoder`) {
        if (req.method === 'PATCH') world.patches.push({ body: JSON.parse(body) as Record<string, unknown>, query: url.search });
        return json(200, world.deploy);
      }
      return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' });
    });
  });
  let undo: TemplateUndo;
  /** The request decide sends for a Deployment: no template generation, the digest of the template it read. */
  let req: UndoRequest;

  before(async () => {
    await listenLocal(server);
    undo = new TemplateUndo(clientFor(server));
    req = { ...REQ, kind: 'Deployment', expectedTemplateDigest: templateDigest(BROKEN) };
    delete req.expectedTemplateGeneration;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    world.rs = replicaSet();
    world.deploy = deployment();
    world.patches = [];
    world.rollouts = undefined;
  });

  it("patches the Deployment's template with the ReplicaSet's, its pod-template-hash label left out, and the record", async () => {
    assert.deepEqual(await undo.undo(req), { kind: 'Applied' });
    assert.equal(world.patches.length, 1);
    const p = world.patches[0]!.body as { spec: { template: Record<string, unknown> }; metadata: { annotations: Record<string, string> } };
    assert.deepEqual(p.spec.template, { ...GOOD, $patch: 'replace' });
    assert.deepEqual(JSON.parse(p.metadata.annotations[UNDO_RECORD_ANNOTATION]!), { ...REQ.record, undone: ['bbb'] });
  });

  it("a Deployment already on the ReplicaSet's template (its label aside) is at the target: nothing sent", async () => {
    world.deploy = deployment(GOOD);
    assert.deepEqual(await undo.undo({ ...req, expectedTemplateDigest: templateDigest(GOOD) }), { kind: 'AlreadyAtTarget' });
    assert.equal(world.patches.length, 0);
  });

  it('a template changed since the decision (a fix pushed forward) is never overwritten', async () => {
    const fix = { ...GOOD, spec: { containers: [{ name: 'decoder', image: 'decoder:3-fixed' }] } };
    world.deploy = deployment(fix);
    const out = await undo.undo(req);
    assert.equal(out.kind, 'TemplateChanged');
    assert.match('detail' in out ? out.detail : '', /template changed since the undo was decided/);
    assert.equal(world.patches.length, 0);
  });

  const suspicious: Array<{ name: string; rs: Record<string, unknown>; detail: RegExp }> = [
    {
      name: "another kind's ReplicaSet",
      rs: replicaSet({ ownerKind: 'Rollout' }),
      detail: /ReplicaSet decoder-aaa is not controlled by this Deployment/,
    },
    {
      name: 'another pod-template-hash than the decision named',
      rs: replicaSet({ hash: 'zzz' }),
      detail: /ReplicaSet decoder-aaa carries hash zzz, not the aaa/,
    },
    { name: 'no template', rs: { ...replicaSet(), spec: { replicas: 0 } }, detail: /ReplicaSet decoder-aaa holds no pod template/ },
  ];
  for (const tc of suspicious) {
    it(`refuses to copy from a ReplicaSet with ${tc.name}, sending nothing`, async () => {
      world.rs = tc.rs;
      const out = await undo.undo(req);
      assert.equal(out.kind, 'Failed');
      assert.match('detail' in out ? out.detail : '', tc.detail);
      assert.equal(world.patches.length, 0);
    });
  }

  describe('an Argo Rollout that runs the Deployment by spec.workloadRef, listed afresh before the undo', () => {
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'decoder' };
    const cases: Array<{ name: string; rollouts: Array<Record<string, unknown>> | 'forbidden'; kind: string; detail?: RegExp }> = [
      {
        name: 'one names it: not undone, the Rollout named, nothing sent',
        rollouts: [rollout('other', { ...ref, name: 'web' }), rollout('decoder-canary', ref)],
        kind: 'NotUndone',
        detail: /the Deployment is managed by Rollout\/decoder-canary, which runs it by reference and would revert an undo/,
      },
      {
        name: 'a reference without its apiVersion still names it',
        rollouts: [rollout('decoder-canary', { kind: 'Deployment', name: 'decoder' })],
        kind: 'NotUndone',
        detail: /managed by Rollout\/decoder-canary/,
      },
      {
        name: 'the list is forbidden: who manages it is unknown, so not undone, the missing right named',
        rollouts: 'forbidden',
        kind: 'NotUndone',
        detail: /whether a Rollout \(rollouts\.argoproj\.io\) runs the Deployment cannot be read: the operator may not list them/,
      },
      {
        name: "Rollouts that name other workloads, or another group's kind of that name: undone",
        rollouts: [rollout('web', { ...ref, name: 'web' }), rollout('odd', { ...ref, apiVersion: 'example.com/v1' }), rollout('plain', {})],
        kind: 'Applied',
      },
    ];
    for (const tc of cases)
      it(tc.name, async () => {
        world.rollouts = tc.rollouts;
        const out = await undo.undo(req);
        assert.equal(out.kind, tc.kind);
        if (tc.detail) assert.match('detail' in out ? out.detail : '', tc.detail);
        assert.equal(world.patches.length, tc.kind === 'Applied' ? 1 : 0);
      });
    for (const tc of cases)
      it(`Report mode's dry run: ${tc.name}`, async () => {
        world.rollouts = tc.rollouts;
        const out = await undo.dryRun('Deployment', NS, 'decoder', 'decoder-aaa');
        assert.equal(out.kind, tc.kind === 'Applied' ? 'Accepted' : 'Rejected');
        if (tc.detail) assert.match('detail' in out ? out.detail : '', tc.detail);
        assert.equal(world.patches.length, tc.kind === 'Applied' ? 1 : 0, 'a refused dry run sends no patch');
      });
  });

  it('dry-runs the same patch (dryRun=All) for Report mode', async () => {
    assert.deepEqual(await undo.dryRun('Deployment', NS, 'decoder', 'decoder-aaa'), { kind: 'Accepted' });
    assert.equal(world.patches.length, 1);
    assert.match(world.patches[0]!.query, /dryRun=All/);
    assert.deepEqual((world.patches[0]!.body as { spec: unknown }).spec, { template: { ...GOOD, $patch: 'replace' } });
  });
});
