/**
 * End to end, on the shared local control plane: causes the cluster already states in Warning Events.
 *
 * - Pod Security `enforce=baseline`, template turned privileged: the DaemonSet controller's FailedCreate
 *   quotes the refusal; it is the revision's fault, so the undo restores the previous template.
 * - A ResourceQuota on the pod count at its limit, with maxSurge 1: the quota is named and the namespace's
 *   configuration, not the revision, is blamed; nothing is undone.
 * - A readiness probe that fails: the kubelet's Unhealthy Event is quoted beside "not ready".
 * - A template naming a ServiceAccount that does not exist: ServiceAccount admission refuses its pods.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SETTINGS_VOLUME, decoderDaemonSet, holdsFor, kubectl, kubectlJson, waitFor } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';
import { apply } from '../support/operator.js';

const UNDO = { suspectAfterSeconds: 2, progressDeadlineSeconds: 6, onStall: { action: 'Undo' } };
const SCENARIOS = ['psa', 'psasurge', 'quota', 'mount', 'sandbox', 'initpull', 'initcrash', 'probe', 'sa'] as const;
const suite = new GuardSuite('causes', SCENARIOS);
const { read, pools } = suite;
const getGuard = (n: string): Promise<GuardObj> => read.guard(n);
const template = async (n: string): Promise<{ image: string; privileged: boolean }> => {
  const ds = await kubectlJson<{
    spec: { template: { spec: { containers: Array<{ image: string; securityContext?: { privileged?: boolean } }> } } };
  }>(['get', 'ds', 'decoder'], { ns: n });
  const c = ds.spec.template.spec.containers[0]!;
  return { image: c.image, privileged: c.securityContext?.privileged === true };
};
const reasons = (n: string, kind: string): Promise<string[]> => read.reasons(n, kind);
const waitGuard = (n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> =>
  read.waitGuard(n, pred, what, timeoutMs);
const rollOut = async (s: (typeof SCENARIOS)[number], extra: Partial<Parameters<typeof decoderDaemonSet>[0]> = {}): Promise<string> =>
  (await suite.guarded(s, UNDO, extra)).n;

describe('causes from Warning Events', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(() => suite.tearDown());

  it('Pod Security baseline refuses a privileged template: AdmissionRefused quoted, the revision blamed, undone to one generation', async () => {
    const n = await rollOut('psa');
    await kubectl(['label', 'namespace', n, 'pod-security.kubernetes.io/enforce=baseline']);
    const before = await getGuard(n);
    await kubectl(
      [
        'patch',
        'ds',
        'decoder',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/securityContext', value: { privileged: true } }]),
      ],
      { ns: n },
    );
    const stalled = await waitGuard(
      n,
      (g) => g.status?.cause === 'AdmissionRefused' || g.status?.state === 'RollingBack' || g.status?.state === 'RolledBack',
      'AdmissionRefused',
    );
    if (stalled.status?.cause === 'AdmissionRefused') {
      const e = stalled.status.emptyNodes?.find((x) => x.cause === 'AdmissionRefused');
      assert.equal(e?.owner, 'Revision');
      assert.match(e?.message ?? '', /violates PodSecurity "baseline:latest": privileged/);
    }
    const done = await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(done.status?.currentRevision?.hash, before.status?.currentRevision?.hash);
    assert.deepEqual(await template(n), { image: 'registry.local/decoder:1', privileged: false });
    assert.equal(done.status?.generations?.length, 1, 'one generation again');
    const evs = await reasons(n, 'DaemonSet');
    assert.ok(evs.includes('FailedCreate'), 'the controller stated the refusal');
    assert.ok(evs.includes('RolloutStalled') && evs.includes('UndoStarted') && evs.includes('UndoComplete'), evs.join(', '));
    const { stdout } = await kubectl(
      ['get', 'events', '--field-selector=involvedObject.kind=RolloutGuard,reason=RolloutStalled', '-o', 'jsonpath={.items[*].message}'],
      { ns: n },
    );
    assert.match(stdout, /violates PodSecurity/);
    assert.match(stdout, /The new revision itself fails on Ready node|revision is at fault/);
    // Judged by comparison: a pod of revision 1 is admitted, so only the new template is refused.
    assert.match(stdout, /is admitted \(server-side dry run\): only the new template is refused \(it changed: securityContext/);
  });

  it('with maxSurge 1 the refused pod is a surge pod and no node is empty: the refusal itself is the evidence, and the undo is made', async () => {
    const n = await rollOut('psasurge', { maxSurge: 1, maxUnavailable: 0 });
    await kubectl(['label', 'namespace', n, 'pod-security.kubernetes.io/enforce=baseline']);
    await kubectl(
      [
        'patch',
        'ds',
        'decoder',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/securityContext', value: { privileged: true } }]),
      ],
      { ns: n },
    );
    const done = await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.deepEqual(await template(n), { image: 'registry.local/decoder:1', privileged: false });
    assert.equal(done.status?.generations?.length, 1, 'one generation again');
    const { stdout } = await kubectl(
      ['get', 'events', '--field-selector=involvedObject.kind=RolloutGuard,reason=RolloutStalled', '-o', 'jsonpath={.items[*].message}'],
      { ns: n },
    );
    assert.match(stdout, /no node is blocked, but the DaemonSet controller cannot create the new pods: admission refuses the new template/);
    assert.equal((await reasons(n, 'DaemonSet')).filter((r) => r === 'UndoStarted').length, 1);
  });

  it('a ResourceQuota on the pod count at its limit with maxSurge 1: the quota named, the namespace blamed, no undo', async () => {
    const n = await rollOut('quota', { maxSurge: 1, maxUnavailable: 0 });
    // Exactly the pods running now: the surge pod of the next rollout has no room.
    await apply({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pod-count', namespace: n }, spec: { hard: { pods: '3' } } });
    await waitFor(
      async () => {
        const q = await kubectlJson<{ status?: { used?: { pods?: string } } }>(['get', 'resourcequota', 'pod-count'], { ns: n });
        return q.status?.used?.pods === '3';
      },
      { timeoutMs: 60_000, describe: 'the quota controller counted the pods (status.used.pods 3)' },
    );
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled', 90_000);
    assert.equal(g.status?.cause, 'QuotaExceeded', JSON.stringify(g.status?.message));
    assert.equal(g.status?.owner, 'Configuration');
    // The surge pod is refused while the old pods run on: no node is empty, the refusal is the rollout's.
    assert.match(g.status?.message ?? '', /ResourceQuota pod-count has no room for another pod/);
    assert.match(g.status?.message ?? '', /exceeded quota: pod-count, requested: pods=1, used: pods=3, limited: pods=3/);
    assert.match(g.status?.message ?? '', /An undo would not help/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
    await holdsFor(
      async () => (await template(n)).image === 'registry.local/decoder:2' && (await getGuard(n)).status?.lastUndo === undefined,
      { durationMs: 5_000, describe: 'no undo' },
    );
    assert.ok((await reasons(n, 'DaemonSet')).includes('UndoSkipped'));
  });

  it('a volume the new revision added does not mount (FailedMount): the revision blamed, the kubelet quoted, undone', async () => {
    const n = await rollOut('mount');
    const before = await getGuard(n);
    const ds = decoderDaemonSet({
      name: 'decoder',
      ns: n,
      pool: pools.mount.name,
      image: 'registry.local/decoder:2-mountfail',
      settingsVolume: true,
    });
    await apply(ds);
    const g = await waitGuard(n, (x) => x.status?.cause === 'VolumeMountFailure' || x.status?.state === 'RolledBack', 'VolumeMountFailure');
    if (g.status?.cause === 'VolumeMountFailure') {
      const b = g.status.blockedNodes?.find((x) => x.cause === 'VolumeMountFailure');
      assert.equal(b?.owner, 'Revision');
      assert.match(
        b?.message ?? '',
        new RegExp(
          `volume ${SETTINGS_VOLUME} that the new revision added or changed does not mount: "MountVolume.SetUp failed for volume "${SETTINGS_VOLUME}"`,
        ),
      );
    }
    const done = await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(done.status?.currentRevision?.hash, before.status?.currentRevision?.hash);
    assert.equal((await template(n)).image, 'registry.local/decoder:1');
    const { stdout } = await kubectl(['describe', 'rolloutguard', 'decoder'], { ns: n });
    assert.doesNotMatch(stdout, /Cause:\s+Unknown/);
  });

  it('a template naming a ServiceAccount that does not exist (ServiceAccount admission, as real clusters run it): AdmissionRefused, the revision blamed by comparison, undone', async () => {
    const n = await rollOut('sa');
    await kubectl(
      [
        'patch',
        'ds',
        'decoder',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/spec/template/spec/serviceAccountName', value: 'decoder-missing' }]),
      ],
      { ns: n },
    );
    const done = await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(done.status?.generations?.length, 1, 'one generation again');
    const { stdout } = await kubectl(
      ['get', 'events', '--field-selector=involvedObject.kind=RolloutGuard,reason=RolloutStalled', '-o', 'jsonpath={.items[*].message}'],
      { ns: n },
    );
    assert.match(stdout, /serviceaccount "decoder-missing" not found/);
    assert.match(stdout, /is admitted \(server-side dry run\): only the new template is refused \(it changed: serviceAccountName/);
    const ds = await kubectlJson<{ spec: { template: { spec: { serviceAccountName?: string } } } }>(['get', 'ds', 'decoder'], { ns: n });
    assert.equal(ds.spec.template.spec.serviceAccountName, undefined, 'the undo restored the template without it');
  });

  it('a readiness probe that fails (kwok "probefail", shaped on the real kubelet\'s Unhealthy Event): NotReady, the revision blamed, the probe quoted', async () => {
    const n = (await suite.guarded('probe', { suspectAfterSeconds: 2, progressDeadlineSeconds: 6 })).n;
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-probefail'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled');
    const b = g.status?.blockedNodes?.find((x) => x.cause === 'NotReady');
    assert.equal(b?.owner, 'Revision', JSON.stringify(g.status));
    assert.equal(
      b?.message,
      'container running but not ready; the kubelet: "Readiness probe failed: HTTP probe failed with statuscode: 503"',
    );
  });

  it("a sandbox failure (FailedCreatePodSandBox) is the node's: named, quoted, never undone", async () => {
    const n = await rollOut('sandbox');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-sandboxfail'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'SandboxFailure', JSON.stringify(g.status?.message));
    assert.equal(g.status?.owner, 'Node');
    const b = g.status?.blockedNodes?.find((x) => x.cause === 'SandboxFailure');
    assert.match(b?.message ?? '', /the node cannot create the pod sandbox: "Failed to create pod sandbox/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
    await holdsFor(
      async () =>
        (await template(n)).image === 'registry.local/decoder:2-sandboxfail' && (await getGuard(n)).status?.lastUndo === undefined,
      { durationMs: 5_000, describe: 'no undo' },
    );
    const { stdout } = await kubectl(['describe', 'rolloutguard', 'decoder'], { ns: n });
    assert.match(stdout, /Owner:\s+Node/);
    assert.match(stdout, /plugin type="calico" failed/);
  });

  it('an init container that cannot pull its image keeps the class ImagePullFailure and is named; undone', async () => {
    const n = await rollOut('initpull', { initImage: 'registry.local/init:1' });
    await kubectl(['set', 'image', 'ds/decoder', 'init=registry.local/init:2-broken'], { ns: n });
    const g = await waitGuard(
      n,
      (x) => x.status?.state === 'Stalled' || x.status?.state === 'RollingBack' || x.status?.state === 'RolledBack',
      'stalled',
    );
    const e = await kubectl(
      ['get', 'events', '--field-selector=involvedObject.kind=RolloutGuard,reason=RolloutStalled', '-o', 'jsonpath={.items[*].message}'],
      { ns: n },
    );
    assert.match(e.stdout, /Cause ImagePullFailure/);
    assert.match(e.stdout, /init container init: /);
    assert.ok(g.status);
    await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
  });

  it('an init container in a crash loop keeps the class CrashLoop and is named', async () => {
    const n = await rollOut('initcrash', { initImage: 'registry.local/init:1' });
    await kubectl(['set', 'image', 'ds/decoder', 'init=registry.local/init:2-crashloop'], { ns: n });
    const g = await waitGuard(n, (x) => (x.status?.blockedNodes ?? []).some((b) => b.cause === 'CrashLoop'), 'CrashLoop named');
    const b = g.status!.blockedNodes!.find((x) => x.cause === 'CrashLoop')!;
    assert.equal(b.owner, 'Revision');
    assert.equal(b.reason, 'CrashLoopBackOff');
    assert.match(b.message, /^init container init: /);
  });
});
