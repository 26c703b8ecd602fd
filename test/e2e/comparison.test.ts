/**
 * End to end, on the shared local control plane, every guard with onStall.action Undo (one reports): the
 * verdict judged by comparison with the previous revision. Each case asserts the owner, the comparison
 * that decided, and the DaemonSet's template afterwards (undone or not).
 *
 * - maxSurge with a hostPort both revisions have: the surge pod never fits; Configuration, no undo.
 * - maxSurge on nodes with room for one pod, requests unchanged: Configuration, no undo.
 * - Pod Security arriving after a privileged revision refuses the next one and the old one too (a
 *   server-side dry run of a pod of the old revision): Configuration, no undo.
 * - a node whose old pod crash-looped before the rollout ("sickon1" on the -1 node): the new pod fails
 *   there the same way; Node, no undo. The same on 25 of 30 nodes, more than a status list names: every
 *   one is recorded, none counts against the revision.
 * - the same image marker introduced by the new revision (it fails only on one class of node, where the
 *   old revision ran): Revision, undone.
 * - two broken revisions pushed in a row: one undo, straight to the last revision that ran on every node.
 * - a person runs `kubectl rollout undo` while the guard reports: followed, no action of its own.
 * - a dependency breaks the old pods mid-rollout while the new ones are Ready: no undo.
 * - a revision whose pod takes its own node NotReady: this test plays the node agent's part, turning each
 *   node NotReady (as its kubelet reports it, kept by kwok under rollout-guard.test/not-ready) and the
 *   agent into a crash loop right after the new pod starts there. Revision, undone, though the nodes
 *   look guilty.
 */
// Manifests are edited as the plain JSON they are.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decoderDaemonSet, holdsFor, kubectl, kubectlJson, waitFor } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';
import { apply, guard } from '../support/operator.js';

const UNDO = { suspectAfterSeconds: 3, progressDeadlineSeconds: 8, onStall: { action: 'Undo' } };
/** The 'manysick' pool: 30 nodes, the first 25 named "...-1", where a "sickon1" image crash-loops. */
const MANY_NODES = 30;
const MANY_SICK = 25;
const manySickName = (pool: string, i: number): string => (i <= MANY_SICK ? `${pool}-s${String(i).padStart(2, '0')}-1` : `${pool}-${i}`);
const SCENARIOS = [
  'hostport',
  'surgecpu',
  'psaboth',
  'preexisting',
  'manysick',
  'nodeclass',
  'twobroken',
  'humanundo',
  'oldbreak',
  'knockout',
] as const;
type Scenario = (typeof SCENARIOS)[number];
const suite = new GuardSuite(
  'cmp',
  SCENARIOS,
  (s) => (s === 'manysick' ? MANY_NODES : 3),
  (s) => (s === 'surgecpu' ? { allocatable: { cpu: '1' } } : s === 'manysick' ? { nameOf: manySickName } : {}),
);
const { read, ns, pools } = suite;
const waitGuard = (n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> =>
  read.waitGuard(n, pred, what, timeoutMs);
const image = (n: string): Promise<string> => read.image(n);
const reasons = (n: string, kind: string): Promise<string[]> => read.reasons(n, kind);
const setImage = (n: string, img: string): Promise<unknown> => kubectl(['set', 'image', 'ds/decoder', `decoder=${img}`], { ns: n });
const noUndo = async (n: string, img: string): Promise<void> =>
  holdsFor(async () => (await image(n)) === img && (await read.guard(n)).status?.lastUndo === undefined, {
    durationMs: 4_000,
    describe: `no undo: ${img} stays`,
  });
const stalled = (g: GuardObj): boolean => g.status?.state === 'Stalled';
/** `kubectl describe rg` of scenario namespace `n`, kept for docs/states-and-causes.md when RG_CAPTURE_DIR names a folder. */
async function capture(n: string, file: string): Promise<void> {
  const dir = process.env.RG_CAPTURE_DIR;
  if (dir) await writeFile(join(dir, file), (await kubectl(['describe', 'rolloutguard', 'decoder'], { ns: n })).stdout);
}

/** Applies the decoder DaemonSet of scenario `s` (image `img`), with `edit` applied to its manifest. */
async function guarded(
  s: Scenario,
  edit: (ds: Record<string, any>) => void = () => undefined,
  img = 'registry.local/decoder:1',
): Promise<string> {
  const n = ns[s];
  const ds = decoderDaemonSet({ name: 'decoder', ns: n, pool: pools[s].name, image: img }) as Record<string, any>;
  edit(ds);
  await apply(ds);
  return n;
}
/** Waits until scenario `s` is rolled out on its three nodes, then creates its guard and waits until it is Healthy. */
async function healthy(s: Scenario, spec: Record<string, unknown> = UNDO): Promise<void> {
  await read.availableOn(ns[s], 3);
  await apply(guard('decoder', ns[s], 'decoder', spec));
  await waitGuard(ns[s], (g) => g.status?.state === 'Healthy', 'Healthy');
}
const surge = (ds: Record<string, any>): void => {
  ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: 0, maxSurge: 1 };
};

describe(
  'judgement by comparison end to end: would the previous revision fail the same way, on this node, now?',
  { concurrency: true },
  () => {
    before(() => suite.setUp());
    after(() => suite.tearDown());

    it('maxSurge with a hostPort both revisions have: the surge pod never fits; Stalled, owner Configuration, the port named, no undo', async () => {
      const n = await guarded('hostport', (ds) => {
        surge(ds);
        ds.spec.template.spec.containers[0].ports = [{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }];
      });
      await healthy('hostport');
      await setImage(n, 'registry.local/decoder:2');
      const g = await waitGuard(n, stalled, 'Stalled');
      assert.equal(g.status?.owner, 'Configuration', JSON.stringify(g.status));
      assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
      const b = g.status?.blockedNodes?.find((x) => x.owner === 'Configuration');
      assert.match(
        b?.comparison ?? '',
        /the previous revision has the same hostPort 8080\/TCP and would not fit either: maxSurge with a hostPort cannot surge/,
      );
      assert.match(b?.message ?? '', /free ports/, 'the scheduler is quoted');
      await noUndo(n, 'registry.local/decoder:2');
      await capture(n, 'hostport.txt');
    });

    it('maxSurge on nodes with room for one pod, requests unchanged: Insufficient cpu for the surge pod; owner Configuration, no undo', async () => {
      const n = await guarded('surgecpu', (ds) => {
        surge(ds);
        ds.spec.template.spec.containers[0].resources.requests.cpu = '600m';
      });
      await healthy('surgecpu');
      await setImage(n, 'registry.local/decoder:2');
      const g = await waitGuard(n, stalled, 'Stalled');
      assert.equal(g.status?.owner, 'Configuration', JSON.stringify(g.status));
      assert.equal(g.status?.cause, 'InsufficientResources');
      const b = g.status?.blockedNodes?.find((x) => x.owner === 'Configuration');
      assert.match(b?.comparison ?? '', /requests the same \(cpu 600m\) and would not fit beside the old pod either/);
      await noUndo(n, 'registry.local/decoder:2');
    });

    it('Pod Security that arrived after a privileged revision refuses the next revision and, by dry run, the old one too: not the revision, no undo', async () => {
      const n = await guarded('psaboth', (ds) => {
        ds.spec.template.spec.containers[0].securityContext = { privileged: true };
      });
      await healthy('psaboth');
      await kubectl(['label', 'namespace', n, 'pod-security.kubernetes.io/enforce=baseline']);
      await setImage(n, 'registry.local/decoder:2');
      const g = await waitGuard(n, (x) => stalled(x) && x.status?.rollout?.admission !== undefined, 'Stalled, compared');
      assert.equal(g.status?.rollout?.admission?.result, 'Refused', JSON.stringify(g.status?.rollout));
      assert.match(g.status?.rollout?.admission?.message ?? '', /violates PodSecurity "baseline:latest": privileged/);
      assert.equal(g.status?.owner, 'Configuration', JSON.stringify(g.status));
      assert.equal(g.status?.cause, 'AdmissionRefused');
      const e = g.status?.emptyNodes?.find((x) => x.cause === 'AdmissionRefused');
      assert.match(
        e?.comparison ?? '',
        /is refused too \(server-side dry run: .*\): the policy, not the revision, blocks the rollout, and an undo cannot help/,
      );
      assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
      await noUndo(n, 'registry.local/decoder:2');
      await capture(n, 'admission.txt');
      // The dry run created nothing.
      const pods = await kubectlJson<{ items: Array<{ spec: { containers: Array<{ image: string }> } }> }>(['get', 'pods'], { ns: n });
      assert.ok(
        pods.items.every((p) => p.spec.containers[0]!.image === 'registry.local/decoder:1'),
        'only the old pods exist',
      );
    });

    it('a node whose old pod crash-looped before the rollout: the new pod fails there the same way; owner Node, no undo', async () => {
      const n = await guarded('preexisting', () => undefined, 'registry.local/decoder-sickon1:1');
      await apply(guard('decoder', n, 'decoder', UNDO));
      const sick = pools.preexisting.nodes[0]!;
      // Before any template change the guard follows the node that cannot run the current revision.
      await waitGuard(
        n,
        (g) => g.status?.blockedNodes?.some((b) => b.node === sick && b.cause === 'CrashLoop') === true,
        'the -1 node blocked on revision 1',
      );
      await setImage(n, 'registry.local/decoder-sickon1:2');
      const g = await waitGuard(
        n,
        (x) =>
          stalled(x) &&
          x.status?.rollout?.fromRevision?.revision === 1 &&
          x.status.blockedNodes?.some((b) => b.node === sick && b.hash !== undefined && b.owner === 'Node') === true,
        'Stalled on revision 2, the -1 node blamed',
        120_000,
      );
      assert.deepEqual(g.status?.rollout?.unavailableAtStart, [{ node: sick, cause: 'CrashLoop' }]);
      assert.equal(g.status?.owner, 'Node', JSON.stringify(g.status));
      assert.match(
        g.status?.blockedNodes?.find((b) => b.node === sick)?.comparison ?? '',
        /already failing on this node before the rollout started \(CrashLoop\), and the new one fails the same way/,
      );
      assert.equal(g.status?.rollout?.failures, undefined, 'no crash evidence from that node');
      await noUndo(n, 'registry.local/decoder-sickon1:2');
    });

    it('25 nodes whose old pods crash-looped before the rollout, more than a status list names: all recorded, owner Node, no undo', async () => {
      const n = await guarded('manysick', () => undefined, 'registry.local/decoder-sickon1:1');
      await apply(guard('decoder', n, 'decoder', UNDO));
      const sick = pools.manysick.nodes.filter((x) => x.endsWith('-1')).sort();
      assert.equal(sick.length, MANY_SICK);
      // Revision 1 crashes on 25 Ready nodes from its first placement, with nothing earlier to compare
      // with: the guard follows that placement as a rollout in place, and judges it Failed (no undo:
      // there is no earlier revision).
      await waitGuard(
        n,
        (g) => g.status?.blockedNodeCount === MANY_SICK && (g.status.blockedNodes ?? []).every((b) => b.cause === 'CrashLoop'),
        'the 25 sick nodes blocked on revision 1, 20 of them named',
      );
      await setImage(n, 'registry.local/decoder-sickon1:2');
      // The controller replaces the 25 unavailable old pods first; the new ones crash there the same way.
      const g = await waitGuard(
        n,
        (x) =>
          x.status?.rollout?.toRevision?.revision === 2 &&
          ['Stalled', 'Failed', 'RollingBack', 'RolledBack'].includes(x.status?.state ?? ''),
        'a verdict on revision 2',
        120_000,
      );
      assert.equal(g.status?.state, 'Stalled', JSON.stringify(g.status?.rollout));
      assert.deepEqual(
        g.status?.rollout?.unavailableAtStart?.map((u) => u.node),
        sick,
        'every sick node recorded, past the 20 the status named',
      );
      assert.equal(g.status?.rollout?.unavailableAtStartUnlisted, undefined);
      assert.equal(g.status?.rollout?.failures, undefined, 'no crash evidence from those nodes');
      assert.equal(g.status?.owner, 'Node', JSON.stringify(g.status));
      assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
      await noUndo(n, 'registry.local/decoder-sickon1:2');
    });

    it('a revision that fails only on one node where the old revision ran fine: owner Revision, undone', async () => {
      const n = await guarded('nodeclass');
      await healthy('nodeclass');
      await setImage(n, 'registry.local/decoder-sickon1:2');
      const g = await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
      assert.equal(g.status?.lastUndo?.result, 'Complete');
      assert.equal(await image(n), 'registry.local/decoder:1');
      assert.ok((await reasons(n, 'RolloutGuard')).includes('UndoStarted'));
    });

    it('two broken revisions pushed in a row: one undo, straight to the last revision that ran on every node', async () => {
      const n = await guarded('twobroken');
      await healthy('twobroken', { ...UNDO, progressDeadlineSeconds: 20 });
      await setImage(n, 'registry.local/decoder-broken:2');
      await waitGuard(n, (g) => g.status?.cause === 'ImagePullFailure', 'ImagePullFailure on revision 2');
      await setImage(n, 'registry.local/decoder-broken:3');
      const g = await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
      assert.equal(await image(n), 'registry.local/decoder:1', 'straight back to revision 1');
      assert.match(g.status?.lastUndo?.message ?? '', /every node is back on/);
      const started = (await read.events(n, 'RolloutGuard'))
        .filter((e) => e.reason === 'RolloutStarted')
        .map((e) => e.message ?? e.note ?? '');
      assert.ok(
        started.some((m) =>
          /supersedes revision 2 \([0-9a-f]+\), which never reached every node: an undo would restore revision 1/.test(m),
        ),
        started.join('\n'),
      );
      assert.equal((await reasons(n, 'RolloutGuard')).filter((r) => r === 'UndoStarted').length, 1, 'one undo');
    });

    it('a person runs kubectl rollout undo while the guard reports: followed, no action of its own, not left Stalled', async () => {
      const report = { ...UNDO, onStall: { action: 'Report' } };
      const n = await guarded('humanundo');
      await healthy('humanundo', report);
      await setImage(n, 'registry.local/decoder-broken:2');
      await waitGuard(n, stalled, 'Stalled');
      await kubectl(['rollout', 'undo', 'ds/decoder'], { ns: n });
      const g = await waitGuard(
        n,
        (x) => x.status?.state === 'Healthy' && x.status.rollout?.restored === true,
        'Healthy, the restored revision followed',
        90_000,
      );
      assert.equal(g.status?.lastUndo, undefined, 'the guard made no undo');
      assert.equal(await image(n), 'registry.local/decoder:1');
      const evs = await read.events(n, 'RolloutGuard');
      assert.ok(
        evs.some(
          (e) => e.reason === 'RolloutStarted' && /a person or tool undid the rollout; following it/.test(e.message ?? e.note ?? ''),
        ),
        evs.map((e) => e.message).join('\n'),
      );
    });

    it('a dependency breaks the old pods mid-rollout while the new ones are Ready: no undo, the new revision completes', async () => {
      const n = await guarded('oldbreak', (ds) => {
        ds.spec.minReadySeconds = 4;
      });
      await healthy('oldbreak');
      await setImage(n, 'registry.local/decoder:2');
      await waitGuard(n, (g) => g.status?.state === 'Progressing', 'Progressing');
      const pods = await kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { containers: Array<{ image: string }> } }> }>(
        ['get', 'pods'],
        { ns: n },
      );
      const old = pods.items.filter((p) => p.spec.containers[0]!.image === 'registry.local/decoder:1').map((p) => p.metadata.name);
      assert.ok(old.length > 0, 'old pods still run');
      // One at a time: the rollout may replace an old pod between the list and its annotation, and a
      // pod already gone needs no breaking. At least one old pod must break, or the case proves nothing.
      let broken = 0;
      for (const name of old) {
        const r = await kubectl(['annotate', 'pod', name, 'rollout-guard.test/break=crash'], { ns: n, allowFail: true });
        if (r.code === 0) broken++;
        else assert.match(r.stderr, /NotFound/, r.stderr);
      }
      assert.ok(broken > 0, `no old pod left to break among ${old.join(', ')}`);
      const g = await waitGuard(
        n,
        (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2,
        'Healthy on revision 2',
        120_000,
      );
      assert.equal(g.status?.lastUndo, undefined);
      assert.equal(await image(n), 'registry.local/decoder:2');
      assert.ok(!(await reasons(n, 'RolloutGuard')).includes('UndoStarted'));
    });

    it('a revision whose pod takes its own node NotReady: Failed, cause NodeNotReady, owner Revision, undone though the nodes look guilty', async () => {
      // Two nodes at a time, each new pod available only 5 s after Ready: the agent takes its node down in between.
      const n = await guarded('knockout', (ds) => {
        ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: 2, maxSurge: 0 };
        ds.spec.minReadySeconds = 5;
      });
      await healthy('knockout', { ...UNDO, progressDeadlineSeconds: 60, bakeSeconds: 60 });
      await setImage(n, 'registry.local/decoder-agent:2');
      // The node agent's part: each node whose new pod runs turns NotReady, as its kubelet reports a
      // runtime network that is not ready, and the agent crash-loops there.
      const knocked = new Set<string>();
      let seen = '';
      const knockOut = async (): Promise<boolean> => {
        const pods = await kubectlJson<{
          items: Array<{
            metadata: { name: string };
            spec: { nodeName?: string; containers: Array<{ image: string }> };
            status: { phase?: string };
          }>;
        }>(['get', 'pods'], { ns: n });
        seen = pods.items
          .map((p) => `${p.metadata.name}@${p.spec.nodeName ?? '?'} ${p.spec.containers[0]!.image} ${p.status.phase ?? ''}`)
          .join('; ');
        for (const p of pods.items) {
          const node = p.spec.nodeName;
          if (
            !node ||
            knocked.has(node) ||
            p.spec.containers[0]!.image !== 'registry.local/decoder-agent:2' ||
            p.status.phase !== 'Running'
          )
            continue;
          const now = new Date().toISOString();
          knocked.add(node);
          await kubectl(['annotate', 'node', node, 'rollout-guard.test/not-ready=true']);
          const cond = {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message:
              'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
            lastTransitionTime: now,
            lastHeartbeatTime: now,
          };
          await kubectl([
            'patch',
            'node',
            node,
            '--subresource=status',
            '--type=strategic',
            '-p',
            JSON.stringify({ status: { conditions: [cond] } }),
          ]);
          // The agent itself then crash-loops on the node it broke (kwok: the break annotation).
          // The pod may be gone already: the guard's undo can replace it within the second.
          await kubectl(['annotate', 'pod', p.metadata.name, 'rollout-guard.test/break=crash'], { ns: n }).catch(() => undefined);
        }
        if (knocked.size >= 2) return true;
        const state = (await read.guard(n)).status?.state;
        return state === 'Failed' || state === 'RollingBack' || state === 'RolledBack';
      };
      try {
        await waitFor(knockOut, {
          timeoutMs: 60_000,
          intervalMs: 200,
          describe: 'two nodes knocked out by the new pods (or the verdict first)',
        }).catch(async (e: unknown) => {
          throw new Error(
            `${String(e)}; knocked out: ${[...knocked].join(', ')}; pods: ${seen}; guard: ${JSON.stringify((await read.guard(n)).status)}`,
          );
        });
        const g = await waitGuard(
          n,
          (x) => x.status?.state === 'Failed' || x.status?.state === 'RollingBack' || x.status?.state === 'RolledBack',
          'the verdict',
          60_000,
        );
        const ev = (await read.events(n, 'RolloutGuard')).find((e) => e.reason === 'RevisionFailed');
        assert.ok(ev, `RevisionFailed announced (state ${g.status?.state})`);
        assert.match(ev.message ?? ev.note ?? '', /takes its own node down: 2 nodes turned NotReady right after its pod started there/);
        assert.match(ev.message ?? ev.note ?? '', /Cause NodeNotReady/);
        const done = await waitGuard(
          n,
          (x) => x.status?.lastUndo?.result === 'Applied' || x.status?.lastUndo?.result === 'Complete',
          'undo applied',
          60_000,
        );
        // Applied names the revision restored; Complete (when the undo converged before this read) says every
        // node is back on it, under the number the undo gave it.
        assert.match(done.status?.lastUndo?.message ?? '', /restored revision 1|every node is back on revision \d+/);
        assert.equal(await image(n), 'registry.local/decoder:1');
      } finally {
        // The nodes' own agent is gone with the undo: their kwok reports them Ready again.
        for (const node of knocked) await kubectl(['annotate', 'node', node, 'rollout-guard.test/not-ready-']).catch(() => undefined);
      }
    });
  },
);
