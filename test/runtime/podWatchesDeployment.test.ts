/**
 * PodWatches for a kind whose pods a ReplicaSet creates (a Deployment): the watch selects with the
 * Deployment's selector and `pod-template-hash`, pods are indexed by their ReplicaSet (gather asks by each
 * ReplicaSet's UID within the Deployment's watch), and a pod change counts for the target only when its
 * ReplicaSet is the target's, or not known yet. Against a local HTTP server standing in for the API server.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Meta, SlimGuard } from '../../src/api/objects.js';
import { PodWatches } from '../../src/runtime/podWatches.js';
import { FakeClock } from '../support/fakeClock.js';
import { clientFor, listenLocal } from '../support/localApi.js';

const UID = 'deploy-uid';

/** Pod `name` of ReplicaSet `rs` (UID `rs-uid`), ready or not. */
function pod(name: string, rs: string, rv: string, ready = true): object {
  return {
    metadata: {
      name,
      namespace: 'shop',
      uid: `${name}-uid`,
      resourceVersion: rv,
      labels: { app: 'web', 'pod-template-hash': rs.split('-').pop() },
      ownerReferences: [{ kind: 'ReplicaSet', name: rs, uid: `${rs}-uid`, controller: true }],
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'web:2' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

/** The ReplicaSets' controllers, as the caches know them: web-bbb is this Deployment's, other-ccc another's. */
const RS_OWNER: Record<string, string> = { 'web-bbb': UID, 'other-ccc': 'other-uid' };

describe('PodWatches: pods a ReplicaSet creates', () => {
  let server: http.Server;
  let selectors: Array<string | null>;
  let open: http.ServerResponse[];
  let changes: string[];
  let watches: PodWatches;
  /** A guard following a rollout: the pods are needed. */
  const rolling: SlimGuard = {
    metadata: { name: 'g' },
    spec: { targetRef: { kind: 'Deployment', name: 'web' } },
    status: {
      state: 'Progressing',
      rollout: { toRevision: { hash: 'bbb' }, startedAt: '', lastProgressAt: '', desiredAtStart: 2 } as never,
    },
  };

  beforeEach(async () => {
    selectors = [];
    open = [];
    changes = [];
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      selectors.push(url.searchParams.get('labelSelector'));
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        open.push(res);
        return;
      }
      const items = [pod('web-bbb-1', 'web-bbb', '10'), pod('web-aaa-1', 'web-aaa', '10'), pod('other-ccc-1', 'other-ccc', '10')];
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '10' }, items }));
    });
    await listenLocal(server);
    const clock = new FakeClock(1_000_000);
    const counters = { generation: 2, observedGeneration: 2, desired: 2, current: 3, updated: 1, ready: 2, available: 2, misscheduled: 0 };
    watches = new PodWatches(
      {
        target: () => ({ uid: UID, selector: { matchLabels: { app: 'web' } }, counters }),
        guardsTargeting: () => [rolling],
        workloadOf: (_ns: string, m: Readonly<Pick<Meta, 'ownerReferences'>>) => {
          const owner = RS_OWNER[m.ownerReferences?.[0]?.name ?? ''];
          return owner === undefined ? undefined : { uid: owner };
        },
      },
      {
        client: clientFor(server),
        log: pino({ level: 'silent' }),
        clock,
        timers: clock,
        lingerMs: 30_000,
        informer: { watchTimeoutSeconds: 300, idleTimeoutMs: 600_000, backoff: { initialMs: 1000, maxMs: 1000 } },
        onChange: (_kind, ns, name) => changes.push(`${ns}/${name}`),
      },
    );
    watches.sync('Deployment', 'shop', 'web');
    for (let i = 0; i < 400 && (watches.state('Deployment', 'shop', 'web', UID) !== 'synced' || open.length < 1); i++)
      await new Promise((r) => setTimeout(r, 5));
  });

  afterEach(async () => {
    await watches.stop();
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Sends a watch event of `obj`, and waits until it is cached. */
  async function send(obj: object, name: string, rv: string): Promise<void> {
    open[0]!.write(JSON.stringify({ type: 'MODIFIED', object: obj }) + '\n');
    for (let i = 0; i < 400 && watches.pod('shop', name)?.metadata.resourceVersion !== rv; i++) await new Promise((r) => setTimeout(r, 5));
  }

  it("selects with the Deployment's selector and pod-template-hash, and serves its pods by ReplicaSet within its watch", () => {
    assert.deepEqual(selectors.slice(0, 2), ['app=web,pod-template-hash', 'app=web,pod-template-hash']);
    assert.deepEqual(
      watches.podsOwnedBy('web-bbb-uid', UID).map((p) => p.metadata.name),
      ['web-bbb-1'],
    );
    assert.deepEqual(
      watches.podsOwnedBy('web-aaa-uid', UID).map((p) => p.metadata.name),
      ['web-aaa-1'],
    );
    assert.deepEqual(watches.podsOwnedBy('web-bbb-uid'), [], 'not without the watch that holds them');
    assert.equal(watches.podsOwnedBy('web-bbb-uid', UID)[0]?.hash, 'bbb');
  });

  it("counts a pod change for the target only when its ReplicaSet is the target's, or not known yet", async () => {
    changes = [];
    await send(pod('other-ccc-1', 'other-ccc', '11', false), 'other-ccc-1', '11');
    assert.deepEqual(changes, [], "another Deployment's pod");
    await send(pod('web-bbb-1', 'web-bbb', '12', false), 'web-bbb-1', '12');
    assert.deepEqual(changes, ['shop/web'], "the target's own pod");
    await send(pod('web-aaa-1', 'web-aaa', '13', false), 'web-aaa-1', '13');
    assert.deepEqual(changes, ['shop/web', 'shop/web'], 'a ReplicaSet not cached yet: the benefit of the doubt');
  });
});
