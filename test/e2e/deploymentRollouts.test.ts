/**
 * Deployment rollouts that move under the guard, end to end on the local control plane: a rollover (a
 * third template pushed while the second is broken), a revision that crashes once Ready (Failed, on the
 * evidence, before any old pod is replaced), a scale during a healthy rollout (as an HPA makes
 * one), an admission refusal only the ReplicaSet reports, a Deployment another tool runs at 0 replicas
 * (Argo Rollouts' workloadRef), one whose Canary runs its pods (Flagger), and the commands a person runs
 * on a Deployment (`rollout-guard get deploy/NAME`, `check`, `undo --dry-run`). Verdicts that must never
 * happen are checked on the guard's own Events, which stay an hour.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deploymentManifest } from '../../cluster/manifests.js';
import { POOL_LABEL, holdsFor, kubectl, kubectlJson, waitFor } from '../support/cluster.js';
import { runCli, shown } from '../support/cli.js';
import {
  WEB_GOOD,
  replicaSetOf,
  setWebImage,
  settledWeb,
  webDeployment,
  webImage,
  webPods,
  webReplicaSets,
  WebGuards,
} from '../support/deployments.js';
import { GuardSuite } from '../support/guards.js';
import { apply, guard } from '../support/operator.js';

const SPEC = { suspectAfterSeconds: 6, progressDeadlineSeconds: 15, bakeSeconds: 0, onStall: { action: 'Report' } };
const SCENARIOS = ['rollover', 'crash', 'scale', 'admission', 'argo', 'argokept', 'argoreport', 'flagger', 'commands'] as const;
type Scenario = (typeof SCENARIOS)[number];
const suite = new GuardSuite<Scenario>('depx', SCENARIOS);
const read = suite.read;

const BROKEN = 'registry.local/web:2-broken';
/** Ready for ~5 s, then crashes, again and again (cluster/stages.yaml). */
const CRASH_AFTER = 'registry.local/web:2-crashafter';

/** The CustomResourceDefinition of Flagger's Canary, enough for an object to own `web-primary`. */
const CANARY_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'canaries.flagger.app' },
  spec: {
    group: 'flagger.app',
    scope: 'Namespaced',
    names: { plural: 'canaries', singular: 'canary', kind: 'Canary' },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** The CustomResourceDefinition of Argo Rollouts' Rollout, enough for one to name a Deployment in spec.workloadRef. */
const ROLLOUT_CRD = {
  ...CANARY_CRD,
  metadata: { name: 'rollouts.argoproj.io' },
  spec: {
    ...CANARY_CRD.spec,
    group: 'argoproj.io',
    names: { plural: 'rollouts', singular: 'rollout', kind: 'Rollout' },
    versions: [{ ...CANARY_CRD.spec.versions[0]!, name: 'v1alpha1' }],
  },
};

const { wait: waitWeb, guarded, countOf, verdictEvents } = new WebGuards(suite, SPEC);

/** Writes what a person would see into RG_CAPTURE_DIR/`file`, when set (docs/deployments.md quotes it). */
async function capture(file: string, parts: readonly string[]): Promise<void> {
  const dir = process.env.RG_CAPTURE_DIR;
  if (dir) await writeFile(path.join(dir, file), parts.join('\n'));
}

/** The Deployment's controller has observed its last change. */
async function observed(ns: string, name = 'web'): Promise<void> {
  await waitFor(
    async () => {
      const d = await kubectlJson<{ metadata: { generation: number }; status?: { observedGeneration?: number } }>(['get', 'deploy', name], {
        ns,
      });
      return (d.status?.observedGeneration ?? 0) >= d.metadata.generation;
    },
    { timeoutMs: 60_000, describe: `deploy/${name} observed` },
  );
}

/** An Argo Rollout in `ns` that runs Deployment web by spec.workloadRef and keeps it scaled up: nothing on the Deployment tells. */
async function runByArgoRollout(ns: string): Promise<void> {
  await kubectl(['create', '-f', '-'], {
    ns,
    input: JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'web-rollout', namespace: ns },
      spec: {
        replicas: 3,
        workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', scaleDown: 'never' },
        strategy: { canary: { steps: [{ setWeight: 20 }] } },
      },
    }),
  });
}

describe('Deployment rollouts that move under the guard', { concurrency: true }, () => {
  before(async () => {
    await suite.setUp();
    await apply(CANARY_CRD);
    await apply(ROLLOUT_CRD);
    await kubectl(['wait', '--for=condition=Established', 'crd/canaries.flagger.app', 'crd/rollouts.argoproj.io', '--timeout=60s']);
  });
  after(async () => {
    await suite.tearDown();
    await kubectl(['delete', 'crd', 'canaries.flagger.app', 'rollouts.argoproj.io', '--ignore-not-found', '--wait=false'], {
      allowFail: true,
    });
  });

  it('a rollover: a third template pushed while the second is broken is judged itself, and one undo restores the first', async () => {
    const ns = await guarded('rollover', {}, { onStall: { action: 'Undo' } });
    const first = await replicaSetOf(ns, WEB_GOOD);
    await setWebImage(ns, BROKEN);
    // The second template's pod is there and failing before the third is pushed: three ReplicaSets hold pods.
    await waitFor(
      async () => [...(await webPods(ns)).values()].some((p) => p.waiting === 'ImagePullBackOff' || p.waiting === 'ErrImagePull'),
      {
        timeoutMs: 30_000,
        describe: "revision 2's pod failing to pull",
      },
    );
    const third = 'registry.local/web:3-broken';
    await setWebImage(ns, third);
    const g = await waitWeb(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    assert.equal(g.status?.lastUndo?.fromRevision, 3, JSON.stringify(g.status?.lastUndo));
    assert.equal(g.status?.lastUndo?.toRevision, 1, JSON.stringify(g.status?.lastUndo));
    assert.equal(await countOf(ns, 'UndoStarted'), 1, 'one undo');
    assert.equal(await webImage(ns), WEB_GOOD);
    await settledWeb(ns);
    const pods = [...(await webPods(ns)).values()].filter((p) => !p.deleting);
    assert.deepEqual([...new Set(pods.map((p) => p.hash))], [first.hash], 'every pod on the first template again');
    await holdsFor(async () => (await countOf(ns, 'UndoStarted')) === 1, { durationMs: 5_000, describe: 'no second undo' });
  });

  it('a revision that crashes after becoming Ready: Failed on two crashed pods before any old pod goes, undone once, the old ReplicaSet back at 4', async () => {
    // minReadySeconds 30 far outlasts the ~5 s each pod stays Ready before it crashes (cluster/stages.yaml),
    // however late a loaded machine plays the crash, so no new pod ever counts as available and, with
    // maxUnavailable 0, no old pod is scaled away: the two surge pods are the only ones the revision reaches.
    const ns = await guarded(
      'crash',
      { replicas: 4, maxSurge: 2, maxUnavailable: 0, minReadySeconds: 30 },
      { onStall: { action: 'Undo' }, failedNodesThreshold: 2, progressDeadlineSeconds: 600, suspectAfterSeconds: 300 },
    );
    const first = await replicaSetOf(ns, WEB_GOOD);
    let fewestOld = first.replicas;
    let stopped = false;
    // What the first ReplicaSet was scaled to, read throughout: "before any old pod goes" is a fact of the cluster.
    const watching = (async () => {
      while (!stopped) {
        const old = (await webReplicaSets(ns)).find((r) => r.name === first.name);
        if (old) fewestOld = Math.min(fewestOld, old.replicas);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await setWebImage(ns, CRASH_AFTER);
      const g = await waitWeb(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
      assert.equal(await countOf(ns, 'RevisionFailed'), 1, 'Failed once, on the evidence');
      assert.deepEqual(
        (await verdictEvents(ns)).filter((r) => r !== 'RevisionFailed'),
        [],
        'never Suspect or Stalled: the deadline (600 s) is far off',
      );
      const failed = (await read.events(ns, 'RolloutGuard', 'web')).find((e) => e.reason === 'RevisionFailed');
      assert.match(failed?.message ?? '', /crashes after starting on 2 Ready pods/, failed?.message);
      assert.match(failed?.message ?? '', /The revision is at fault/, failed?.message);
      assert.equal(g.status?.lastUndo?.fromRevision, 2, JSON.stringify(g.status?.lastUndo));
      assert.equal(g.status?.lastUndo?.toRevision, 1, JSON.stringify(g.status?.lastUndo));
      // The Deployment controller numbers the ReplicaSet it brings back 3, as after kubectl rollout undo.
      assert.match(g.status?.lastUndo?.message ?? '', /back on revision 3 \(\w+\), the revision 1 the undo restored, renumbered/);
      assert.equal(await countOf(ns, 'UndoStarted'), 1, 'one undo');
      assert.equal(await webImage(ns), WEB_GOOD);
      await settledWeb(ns, 4);
      assert.equal(fewestOld, 4, 'the old ReplicaSet was never scaled below 4');
      const pods = [...(await webPods(ns)).values()].filter((p) => !p.deleting);
      assert.deepEqual([...new Set(pods.map((p) => p.hash))], [first.hash], 'every pod on the first template again');
      await capture('deployment-crash.txt', [
        `RevisionFailed: ${failed?.message ?? ''}`,
        `lastUndo: ${JSON.stringify(g.status?.lastUndo)}`,
      ]);
    } finally {
      stopped = true;
      await watching;
    }
  });

  it('scaled from 3 to 6 during a healthy rollout (as an HPA does): never Suspect or Stalled, Healthy on 6 pods', async () => {
    const ns = await guarded('scale', { minReadySeconds: 2 });
    await setWebImage(ns, 'registry.local/web:2');
    await kubectl(['scale', 'deploy/web', '--replicas=6'], { ns });
    await settledWeb(ns, 6);
    await waitWeb(ns, (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2, 'Healthy on revision 2');
    assert.deepEqual(await verdictEvents(ns), [], 'no verdict at any time');
  });

  it('admission refuses the new pods (only the ReplicaSet says so): Stalled, the refusal quoted, the revision blamed by comparison', async () => {
    const ns = await guarded('admission');
    // The ServiceAccount admission plugin refuses a pod whose ServiceAccount does not exist: the only trace
    // is the ReplicaSet's FailedCreate Event and its ReplicaFailure condition.
    await kubectl(
      ['patch', 'deploy/web', '--type=merge', '-p', JSON.stringify({ spec: { template: { spec: { serviceAccountName: 'missing' } } } })],
      {
        ns,
      },
    );
    const g = await waitWeb(
      ns,
      (x) => x.status?.state === 'Stalled' && x.status.cause === 'AdmissionRefused' && x.status.rollout?.admission !== undefined,
      'Stalled, AdmissionRefused, the previous ReplicaSet dry-run',
    );
    assert.match(g.status?.message ?? '', /missing/);
    assert.equal(g.status?.rollout?.admission?.result, 'Accepted', JSON.stringify(g.status?.rollout));
    assert.equal(g.status?.owner, 'Revision');
  });

  it('a Deployment run at 0 replicas by another tool (Argo Rollouts workloadRef): a template change is no stall, never undone', async () => {
    const ns = suite.ns.argo;
    await apply(webDeployment({ ns, pool: suite.pools.argo.name, replicas: 0 }));
    await observed(ns);
    await apply(guard('web', ns, 'web', { ...SPEC, onStall: { action: 'Undo' }, targetRef: { kind: 'Deployment', name: 'web' } }));
    await waitWeb(ns, (g) => g.status?.state === 'Healthy', 'Healthy');
    await setWebImage(ns, BROKEN);
    await observed(ns);
    // Past the guard's deadline: nothing runs, so nothing stalls, and the template is the tool's to change.
    await holdsFor(async () => (await read.guard(ns, 'web')).status?.lastUndo === undefined, {
      durationMs: (SPEC.progressDeadlineSeconds + 5) * 1000,
      describe: 'no undo',
    });
    assert.deepEqual(await verdictEvents(ns), []);
    assert.equal(await webImage(ns), BROKEN, 'the template left as the tool set it');
    assert.equal((await read.guard(ns, 'web')).status?.state, 'Healthy');
  });

  it('a Deployment an Argo Rollout runs by workloadRef and keeps scaled up (scaleDown: never): its stall is named, the undo refused at the fresh read, the Rollout named', async () => {
    const ns = await guarded('argokept', {}, { onStall: { action: 'Undo' } });
    await runByArgoRollout(ns);
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.lastUndo?.result === 'Failed', 'the undo refused');
    assert.equal(g.status?.state, 'Stalled', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', 'the verdict stands: only the undo is refused');
    assert.match(
      g.status?.lastUndo?.message ?? '',
      /not applied: the Deployment is managed by Rollout\/web-rollout, which runs it by reference and would revert an undo/,
    );
    assert.equal(await webImage(ns), BROKEN, 'the template left as it was');
    // Said on the guard and on the Deployment, once; never tried again for this revision.
    for (const kind of ['RolloutGuard', 'Deployment']) assert.equal(await countOf(ns, 'UndoSkipped', kind), 1, kind);
    await holdsFor(async () => (await read.guard(ns, 'web')).status?.undoneRevisions?.length === 1 && (await webImage(ns)) === BROKEN, {
      durationMs: 5_000,
      describe: 'one attempt, nothing written',
    });
  });

  it('the same in Report mode: the stall named, and no command to run by hand, the Rollout named instead', async () => {
    const ns = await guarded('argoreport', {}, {});
    await runByArgoRollout(ns);
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.undoPlan?.dryRun === 'Rejected', 'the dry run of the undo refused');
    assert.equal(g.status?.state, 'Stalled', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', 'the verdict stands');
    const said = await waitWeb(ns, (x) => /no command to run by hand/.test(x.status?.message ?? ''), 'the message says why');
    assert.match(
      said.status?.message ?? '',
      /the dry run of that undo was refused, so there is no command to run by hand: the Deployment is managed by Rollout\/web-rollout, which runs it by reference and would revert an undo \(onStall\.action is Report\)/,
    );
    assert.doesNotMatch(said.status?.message ?? '', /kubectl rollout undo/, 'no command the Rollout would revert');
    assert.equal(said.status?.lastUndo, undefined, 'Report mode changes nothing');
    assert.equal(await webImage(ns), BROKEN);
  });

  it("a Deployment whose pods Flagger's Canary runs from a -primary copy: its stall is named, never undone, the Canary named as its manager", async () => {
    const ns = suite.ns.flagger;
    const canary = await kubectlJson<{ metadata: { uid: string } }>(['create', '-f', '-'], {
      ns,
      input: JSON.stringify({ apiVersion: 'flagger.app/v1beta1', kind: 'Canary', metadata: { name: 'web', namespace: ns }, spec: {} }),
    });
    const owner = { apiVersion: 'flagger.app/v1beta1', kind: 'Canary', name: 'web', uid: canary.metadata.uid, controller: true };
    await apply(
      deploymentManifest({
        name: 'web-primary',
        namespace: ns,
        replicas: 1,
        ownerReferences: [owner],
        nodeSelector: { [POOL_LABEL]: suite.pools.flagger.name },
        container: { name: 'web', image: WEB_GOOD, requests: { cpu: '100m', memory: '64Mi' } },
      }),
    );
    const ns2 = await guarded('flagger', {}, { onStall: { action: 'Undo' } });
    assert.equal(ns2, ns);
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled' && x.status.undoSkipped !== undefined, 'Stalled, the undo skipped');
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    assert.equal(g.status?.undoSkipped?.reason, 'OwnedByController');
    assert.match(g.status?.undoSkipped?.message ?? '', /managed by Canary\/web/);
    await holdsFor(async () => (await read.guard(ns, 'web')).status?.lastUndo === undefined, { durationMs: 5_000, describe: 'no undo' });
    assert.equal(await webImage(ns), BROKEN);
  });

  it('the commands on a stalled Deployment: get deploy/NAME and rg/NAME show its pods by ReplicaSet, list -A its row, check exits 3, undo --dry-run names the ReplicaSet', async () => {
    const ns = await guarded('commands');
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    const broken = await replicaSetOf(ns, BROKEN);
    const first = await replicaSetOf(ns, WEB_GOOD);
    const pods = [...(await webPods(ns)).values()];
    const failing = pods.filter((p) => p.replicaSet === broken.name && !p.ready);
    assert.ok(failing.length >= 1, JSON.stringify(pods));

    const viaGuard = await runCli(['get', 'rg/web', '-n', ns]);
    assert.equal(viaGuard.code, 0, shown(viaGuard));
    assert.match(viaGuard.stdout, new RegExp(`^Deployment:\\s+${ns}/web`, 'm'), shown(viaGuard));
    assert.match(viaGuard.stdout, /^State:\s+Stalled/m);
    assert.match(viaGuard.stdout, /^POD\s+REVISION\s+NODE\s+READY\s+RESTARTS\s+STATUS/m);
    for (const p of failing)
      assert.match(viaGuard.stdout, new RegExp(`^${p.name}\\s+2 \\(${broken.hash}\\)\\s+${p.node ?? '-'}\\s+no`, 'm'), shown(viaGuard));
    for (const p of pods.filter((x) => x.replicaSet === first.name))
      assert.match(viaGuard.stdout, new RegExp(`^${p.name}\\s+1 \\(${first.hash}\\)`, 'm'), shown(viaGuard));

    const viaTarget = await runCli(['get', 'deploy/web', '-n', ns]);
    assert.equal(viaTarget.code, 0, shown(viaTarget));
    assert.match(viaTarget.stdout, /^Guarded by:\s+rg\/web\s+Stalled/m, shown(viaTarget));
    for (const p of failing) assert.match(viaTarget.stdout, new RegExp(`^${p.name}\\s`, 'm'), shown(viaTarget));

    const check = await runCli(['check', 'deploy/web', '-n', ns, '--deadline', '4s', '--suspect', '2s']);
    assert.equal(check.code, 3, shown(check));
    assert.match(check.stdout + check.stderr, /kubectl rollout undo deployment\/web/, shown(check));

    // Across namespaces, as a platform team looks: the Deployment's guard in its row, its kind, state, cause and fault.
    const listed = await runCli(['list', '-A']);
    assert.equal(listed.code, 0, shown(listed));
    assert.match(listed.stdout, /^NAMESPACE\s+NAME\s+TARGET\s+KIND\s+STATE/m, shown(listed));
    assert.match(
      listed.stdout,
      new RegExp(`^${ns}\\s+web\\s+web\\s+Deployment\\s+Stalled\\s.*ImagePullFailure\\s+Revision`, 'm'),
      shown(listed),
    );

    const undo = await runCli(['undo', 'deploy/web', '-n', ns, '--dry-run']);
    assert.equal(undo.code, 0, shown(undo));
    assert.match(undo.stdout, new RegExp(`from ReplicaSet ${first.name}`), shown(undo));
    assert.match(undo.stdout, /server-side dry run: accepted/, shown(undo));
    assert.equal(await webImage(ns), BROKEN, 'a dry run changes nothing');
    assert.equal((await webReplicaSets(ns)).length, 2);

    await capture('deployment-commands.txt', [
      `$ kubectl get rg web\n${(await kubectl(['get', 'rg', 'web'], { ns })).stdout}`,
      `$ kubectl rollout-guard get rg/web\n${viaGuard.stdout}`,
      `$ rollout-guard check deploy/web --deadline 4s\n${check.stdout}${check.stderr}`,
      `$ kubectl describe rg web\n${(await kubectl(['describe', 'rg', 'web'], { ns })).stdout}`,
      `guard status message: ${g.status?.message ?? ''}`,
    ]);
  });
});
