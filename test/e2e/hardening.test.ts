/**
 * End to end: nothing lost, nothing stuck, against the real API server.
 *
 * - Events are named from their announcement id: sending one twice creates one Event, and the second
 *   create is refused as AlreadyExists, which the recorder counts as announced.
 * - An operator whose RBAC refuses the guard's status keeps retrying with backoff and says so (a metric,
 *   an error log line); once the grant is added the guard gets its status without anything touching it.
 *   Dropping the key on a 403, as before, would wait for the 10-minute resync.
 * - The clock skew to the API server is estimated from its responses and exported.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { stringify } from 'yaml';
import type { Announcement } from '../../src/api/types.js';
import { ApiClient } from '../../src/k8s/apiClient.js';
import { guardRef } from '../../src/api/objects.js';
import { EventRecorder, eventName } from '../../src/k8s/eventRecorder.js';
import { loadKubeConfig } from '../../src/k8s/kubeConfig.js';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubeconfigPath,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';

interface EventList {
  items: Array<{ metadata: { name: string }; reason: string; eventTime?: string }>;
}

describe('hardening', { concurrency: true }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  const procs: OperatorProcess[] = [];
  let tmp: string;

  before(async () => {
    await ensureCluster();
    await installCrds();
    tmp = await mkdtemp(join(tmpdir(), 'rg-hardening-'));
  });

  after(async () => {
    for (const p of procs) await p.kill();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  });

  it('an Event sent twice exists once: the second create is refused as AlreadyExists and counts as announced', async () => {
    const ns = await createNamespace('hard-events');
    cleanups.push(ns.cleanup);
    const client = ApiClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()));
    try {
      const recorder = new EventRecorder(client, 'hardening-test', pino({ level: 'silent' }));
      const ref = guardRef(ns.name, 'decoder', 'uid-1');
      const a: Announcement = {
        id: 'lz1abc0',
        at: '2026-12-01T10:00:00.000Z',
        type: 'Warning',
        reason: 'RolloutStalled',
        action: 'Detect',
        note: 'test',
        onTarget: false,
      };
      assert.deepEqual(await recorder.emit(ref, undefined, [a]), [a.id], 'created');
      assert.deepEqual(await recorder.emit(ref, undefined, [a]), [a.id], 'refused as AlreadyExists: announced all the same');
      const list = await kubectlJson<EventList>(['get', 'events.events.k8s.io', '-o', 'json'], { ns: ns.name });
      const mine = list.items.filter((e) => e.reason === 'RolloutStalled');
      assert.deepEqual(
        mine.map((e) => e.metadata.name),
        [eventName(ref, a.id)],
      );
      assert.equal(Date.parse(mine[0]!.eventTime ?? ''), Date.parse(a.at), "the Event carries the transition's time, not the send time");
    } finally {
      client.close();
    }
  });

  it('the clock skew to the API server is estimated from its responses and exported', async () => {
    const ns = await createNamespace('hard-clock');
    cleanups.push(ns.cleanup);
    const op = await OperatorProcess.start({ namespaces: [ns.name] });
    procs.push(op);
    const skew = await waitFor(
      async () => {
        const v = await op.metric('rollout_guard_clock_skew_seconds');
        return v === undefined ? undefined : { v };
      },
      { timeoutMs: 20_000, describe: 'clock skew exported' },
    );
    // The API server runs on this machine, on the same clock: the estimate is within the Date header's second.
    assert.ok(Math.abs(skew.v) <= 1, `skew ${skew.v} s`);
    const synced = op.jsonLogs().find((l) => l.msg === 'caches synced; starting workers');
    assert.equal(typeof synced?.clockSkewMs, 'number');
  });

  describe('a status write refused by RBAC (403)', () => {
    let ns: string;
    let pool: NodePool;
    let kubeconfig: string;
    let grantStatus: () => Promise<void>;

    before(async () => {
      const n = await createNamespace('hard-rbac');
      ns = n.name;
      pool = await createNodePool(uniqueName('hard-rbac'), 2);
      cleanups.push(n.cleanup, pool.cleanup);
      const suffix = ns;
      // The operator's reads and Event writes, but not rolloutguards/status.
      const role = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `rg-no-status-${suffix}` },
        rules: [
          { apiGroups: ['rolloutguard.dev'], resources: ['rolloutguards'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['apps'], resources: ['daemonsets', 'controllerrevisions'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [''], resources: ['pods', 'nodes', 'events'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
        ],
      };
      const statusRole = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `rg-status-${suffix}` },
        rules: [{ apiGroups: ['rolloutguard.dev'], resources: ['rolloutguards/status'], verbs: ['get', 'patch'] }],
      };
      const binding = (roleName: string): Record<string, unknown> => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: 'rollout-guard', namespace: ns }],
      });
      await kubectl(['create', 'serviceaccount', 'rollout-guard'], { ns });
      await apply(role);
      await apply(binding(role.metadata.name));
      cleanups.push(async () => {
        await kubectl(['delete', 'clusterrolebinding', role.metadata.name, statusRole.metadata.name, '--ignore-not-found']);
        await kubectl(['delete', 'clusterrole', role.metadata.name, statusRole.metadata.name, '--ignore-not-found']);
      });
      grantStatus = async () => {
        await apply(statusRole);
        await apply(binding(statusRole.metadata.name));
      };
      const token = (await kubectl(['create', 'token', 'rollout-guard', '--duration=1h'], { ns })).stdout.trim();
      const admin = await kubectlJson<{ clusters: Array<{ cluster: Record<string, unknown> }> }>([
        'config',
        'view',
        '--raw',
        '--minify',
        '-o',
        'json',
      ]);
      kubeconfig = join(tmp, 'limited.kubeconfig');
      await writeFile(
        kubeconfig,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: admin.clusters[0]!.cluster }],
          users: [{ name: 'sa', user: { token } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'sa' } }],
          'current-context': 'x',
        }),
      );
      await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
      await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns });
    });

    it('is retried with backoff and said (metric, error log); once granted, the guard gets its status with nothing touching it', async (t) => {
      const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig });
      procs.push(op);
      await apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 5, progressDeadlineSeconds: 20 }));
      const forbidden = 'rollout_guard_reconcile_errors_total{class="forbidden"}';
      await waitFor(async () => ((await op.metric(forbidden)) ?? 0) >= 2, {
        timeoutMs: 30_000,
        describe: 'the refused write retried and counted',
      });
      const said = op.jsonLogs().find((l) => l.level === 'error' && String(l.msg).startsWith('reconcile forbidden'));
      assert.ok(said, 'an error log line says the RBAC refuses a request');
      assert.equal(said.guard, `${ns}/decoder`);
      const before = await kubectlJson<{ status?: { state?: string } }>(['get', 'rolloutguard', 'decoder'], { ns });
      assert.equal(before.status?.state, undefined, 'no status could be written');

      await grantStatus();
      const granted = Date.now();
      const healthy = await waitFor(
        async () => {
          const g = await kubectlJson<{ status?: { state?: string } }>(['get', 'rolloutguard', 'decoder'], { ns });
          return g.status?.state === 'Healthy' ? g : undefined;
        },
        { timeoutMs: 90_000, describe: 'Healthy once the grant exists' },
      );
      assert.equal(healthy.status?.state, 'Healthy');
      // Within the waitFor bound: the backoff at this point is at most tens of seconds, while the safety
      // resync, all that would bring a dropped key back, is 10 minutes away.
      t.diagnostic(`status written ${((Date.now() - granted) / 1000).toFixed(1)} s after the grant`);
    });
  });
});
