/**
 * Fault tests, end to end, against a private control plane (`.cluster-faults/`, ports +100) so that
 * restarting or freezing its API server and etcd cannot disturb the suites that share `.cluster/`.
 *
 * Every case checks that nothing is lost (the guard reaches the state the rollout deserves, on the
 * deadline kept in its status) and nothing is done twice (no duplicate transition Events, the
 * DaemonSet's template generation moves exactly once per undo).
 *
 * The cluster writes an audit log of every write, so "replica X wrote nothing" is read from the API
 * server's own record: in the leader-election cases each replica runs as its own ServiceAccount.
 *
 * Run: `npx tsc -p tsconfig.json && node --test --test-timeout=600000 dist/test/e2e/faults.test.js`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decoderDaemonSet, holdsFor, waitFor } from '../support/cluster.js';
import { OperatorProcess, ROOT, guard, type OperatorOptions } from '../support/operator.js';
import { createNamespace } from '../../cluster/namespaces.js';
import { PrivateCluster, type PrivateNodePool } from '../../cluster/privateCluster.js';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}
interface GuardObj {
  metadata: { resourceVersion: string };
  status?: {
    state?: string;
    message?: string;
    currentRevision?: { revision?: number; hash: string };
    rollout?: { lastProgressAt: string; startedAt: string; toRevision: { hash: string } };
    lastUndo?: { at: string; result: string; message: string; fromHash: string; toHash: string };
    conditions?: Condition[];
  };
}
interface EventObj {
  reason: string;
  reportingInstance?: string;
  eventTime?: string;
  metadata: { creationTimestamp: string };
}
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const BROKEN = 'registry.local/decoder:2-broken';
/** Short lease timings for the leader-election cases (client-go defaults are 15 s / 10 s / 2 s). */
const LEASE_MS = 4_000;
const RETRY_MS = 1_000;
const FAST_LEASE = [`--lease-duration-ms=${LEASE_MS}`, '--renew-deadline-ms=3000', `--retry-period-ms=${RETRY_MS}`];
const RBAC_NS = 'rollout-guard-system';
const OPERATOR_SA = `system:serviceaccount:${RBAC_NS}:rollout-guard`;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

let pc: PrivateCluster;
const procs: OperatorProcess[] = [];

// ---------------------------------------------------------------------------------------------
// Helpers

async function scene(prefix: string, nodes = 3): Promise<{ ns: string; pool: PrivateNodePool }> {
  const ns = await pc.createNamespace(prefix);
  const pool = await pc.createNodePool(prefix, nodes);
  await pc.apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
  await pc.kubectl(['rollout', 'status', 'ds/decoder', '--timeout=120s'], { ns });
  // `rollout status` also says "successfully rolled out" while DESIRED is still 0 (the pool's nodes not yet
  // counted): wait until every node of the pool runs an available pod.
  await waitFor(
    async () => {
      const ds = await pc.kubectlJson<{
        status: { desiredNumberScheduled?: number; numberAvailable?: number; updatedNumberScheduled?: number };
      }>(['get', 'ds', 'decoder'], { ns });
      return (
        ds.status.desiredNumberScheduled === nodes && ds.status.numberAvailable === nodes && ds.status.updatedNumberScheduled === nodes
      );
    },
    { timeoutMs: 120_000, describe: `decoder available on all ${nodes} nodes` },
  );
  return { ns, pool };
}

async function startOperator(ns: string, o: Partial<OperatorOptions> = {}): Promise<OperatorProcess> {
  const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig, ...o });
  procs.push(op);
  return op;
}

/** Options for a replica that campaigns for the Lease `ns/rollout-guard` with the short test timings. */
function replica(ns: string, id: string, kubeconfig: string, extra: string[] = []): Partial<OperatorOptions> {
  return {
    leaderElect: true,
    leaseNamespace: ns,
    identity: id,
    kubeconfig,
    extraArgs: ['--lease-name=rollout-guard', ...FAST_LEASE, ...extra],
  };
}

const getGuard = (ns: string, name = 'decoder'): Promise<GuardObj> => pc.kubectlJson<GuardObj>(['get', 'rolloutguard', name], { ns });

async function waitGuard(
  ns: string,
  pred: (g: GuardObj) => boolean,
  what: string,
  timeoutMs: number,
  ops: OperatorProcess[],
): Promise<GuardObj> {
  let last: GuardObj | undefined;
  try {
    await waitFor(
      async () => {
        last = await getGuard(ns);
        return pred(last);
      },
      { timeoutMs, describe: what },
    );
  } catch (e) {
    const logs = ops.map((o) => o.logs.slice(-25).join('\n')).join('\n---\n');
    const health = await Promise.all(
      ops.map(async (o) => {
        try {
          const { body } = await o.get('/metrics');
          return body
            .split('\n')
            .filter((l) => /^rollout_guard_(informer_|queue_depth|reconcile_duration_seconds_count|status_writes_total)/.test(l))
            .join('\n');
        } catch (err) {
          return `(metrics unavailable: ${err instanceof Error ? err.message : String(err)})`;
        }
      }),
    );
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n${logs}\n--- the operator's informers and queue:\n${health.join('\n---\n')}\n--- the cluster's side:\n${await clusterPicture(ns)}`,
    );
  }
  return last!;
}

/**
 * What the cluster itself shows for the scene's DaemonSet, for a failure message: its generation and
 * counters, its ControllerRevisions, its pods, and the controller manager's last log lines. A guard
 * that did not move is then told apart from a controller that did not.
 */
async function clusterPicture(ns: string): Promise<string> {
  const out: string[] = [];
  const step = async (what: string, f: () => Promise<string>): Promise<void> => {
    try {
      out.push(`${what}: ${await f()}`);
    } catch (e) {
      out.push(`${what}: (unavailable: ${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
    }
  };
  await step('daemonset', async () => {
    const ds = await pc.kubectlJson<{ metadata: { generation?: number; annotations?: Record<string, string> }; status: unknown }>(
      ['get', 'ds', 'decoder'],
      { ns },
    );
    return JSON.stringify({
      generation: ds.metadata.generation,
      templateGeneration: ds.metadata.annotations?.['deprecated.daemonset.template.generation'],
      status: ds.status,
    });
  });
  await step('controllerrevisions', async () => {
    const l = await pc.kubectlJson<{ items: Array<{ metadata: { name: string }; revision: number }> }>(['get', 'controllerrevisions'], {
      ns,
    });
    return l.items.map((r) => `${r.metadata.name}@${r.revision}`).join(', ');
  });
  await step('pods', async () => {
    const l = await pc.kubectlJson<{
      items: Array<{
        metadata: { name: string; labels?: Record<string, string> };
        spec: { nodeName?: string };
        status: { phase?: string };
      }>;
    }>(['get', 'pods'], { ns });
    return l.items
      .map(
        (p) =>
          `${p.metadata.name} ${p.spec.nodeName ?? '-'} ${p.metadata.labels?.['controller-revision-hash'] ?? '-'} ${p.status.phase ?? '-'}`,
      )
      .join('; ');
  });
  await step('kube-controller-manager log', async () => {
    const lines = (await readFile(path.join(pc.dir, 'logs', 'kube-controller-manager.log'), 'utf8')).trimEnd().split('\n');
    return `\n${lines.slice(-15).join('\n')}`;
  });
  return out.join('\n');
}

const stateIs =
  (s: string) =>
  (g: GuardObj): boolean =>
    g.status?.state === s;

function condition(g: GuardObj, type: string): Condition {
  const c = g.status?.conditions?.find((x) => x.type === type);
  assert.ok(c, `condition ${type} in ${JSON.stringify(g.status?.conditions)}`);
  return c;
}

async function events(ns: string, kind = 'RolloutGuard', name = 'decoder'): Promise<EventObj[]> {
  const list = await pc.kubectlJson<{ items: EventObj[] }>(
    ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=${name}`],
    { ns },
  );
  return list.items;
}

const eventAt = (e: EventObj): number => Date.parse(e.eventTime ?? e.metadata.creationTimestamp);

/** Event reasons about the guard, counted; `since` (ms) drops what a slow setup emitted before the fault. */
async function reasonCounts(ns: string, kind = 'RolloutGuard', since = 0): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const e of await events(ns, kind)) if (eventAt(e) >= since) out[e.reason] = (out[e.reason] ?? 0) + 1;
  return out;
}

/**
 * Events are emitted on transitions only: in time order, no reason may follow itself. (Suspect →
 * Resumed → Suspect is a real sequence when a slow controller makes late progress; Suspect → Suspect
 * would be a duplicate.)
 */
async function assertNoRepeatedTransition(ns: string): Promise<void> {
  const seq = (await events(ns)).sort((a, b) => eventAt(a) - eventAt(b)).map((e) => e.reason);
  for (let i = 1; i < seq.length; i++) assert.notEqual(seq[i], seq[i - 1], `a transition Event repeated: ${seq.join(' → ')}`);
}

async function templateGeneration(ns: string): Promise<number> {
  const ds = await pc.kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns });
  return Number(ds.metadata.annotations['deprecated.daemonset.template.generation']);
}

async function setImage(ns: string, image: string): Promise<void> {
  await pc.kubectl(['set', 'image', 'ds/decoder', `decoder=${image}`], { ns });
}

/** Parses the operator's /metrics (Prometheus text format). */
async function samples(op: OperatorProcess): Promise<Sample[]> {
  const { status, body } = await op.get('/metrics');
  assert.equal(status, 200, 'metrics endpoint answers');
  const out: Sample[] = [];
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function sum(all: Sample[], name: string, match: (labels: Record<string, string>) => boolean = () => true): number {
  return all.filter((s) => s.name === name && match(s.labels)).reduce((a, s) => a + s.value, 0);
}

/** Requests this replica sent that change something (anything but GET and WATCH). */
const writeRequests = (all: Sample[]): number =>
  sum(all, 'rollout_guard_api_requests_total', (l) => !['GET', 'WATCH'].includes(l.verb ?? ''));

const intentLogs = (op: OperatorProcess): Array<Record<string, unknown>> =>
  op.jsonLogs().filter((l) => l.msg === 'undo: intent recorded, patching DaemonSet');

/** Writes recorded by the API server's audit log for one user, optionally only those received at or after `since`. */
async function auditWrites(user: string, since = 0): Promise<Array<{ verb: string; what: string; code?: number; at: string }>> {
  return (await pc.audit())
    .filter((e) => e.user.username === user && WRITE_VERBS.has(e.verb) && Date.parse(e.requestReceivedTimestamp) >= since)
    .map((e) => ({
      verb: e.verb,
      what: [e.objectRef?.resource, e.objectRef?.subresource, e.objectRef?.name].filter(Boolean).join('/'),
      ...(e.responseStatus?.code !== undefined ? { code: e.responseStatus.code } : {}),
      at: e.requestReceivedTimestamp,
    }));
}

/**
 * ServiceAccounts `ns/<id>` with the operator's ClusterRoles (config/rbac, undo included) and a Role for
 * Leases in `ns`; returns a kubeconfig per id. Gives each replica its own name in the audit log.
 */
async function replicaKubeconfigs(ns: string, ids: string[]): Promise<Record<string, string>> {
  const subjects = ids.map((id) => ({ kind: 'ServiceAccount', name: id, namespace: ns }));
  const rbac = 'rbac.authorization.k8s.io';
  await pc.apply({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      ...ids.map((id) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: id, namespace: ns } })),
      {
        apiVersion: `${rbac}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: `${ns}-replicas` },
        roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'rollout-guard' },
        subjects,
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: `${ns}-replicas-undo` },
        roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'rollout-guard-undo' },
        subjects,
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'Role',
        metadata: { name: 'leases', namespace: ns },
        rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'leases', namespace: ns },
        roleRef: { apiGroup: rbac, kind: 'Role', name: 'leases' },
        subjects,
      },
    ],
  });
  const out: Record<string, string> = {};
  for (const id of ids) out[id] = await pc.serviceAccountKubeconfig(ns, id);
  return out;
}

async function canI(verb: string, resource: string, ns: string): Promise<boolean> {
  const res = await pc.kubectl(['auth', 'can-i', verb, resource, '-n', ns, `--as=${OPERATOR_SA}`], { allowFail: true });
  return res.stdout.trim() === 'yes';
}

async function lease(ns: string, name: string): Promise<{ holderIdentity?: string; leaseDurationSeconds?: number }> {
  return (await pc.kubectlJson<{ spec: { holderIdentity?: string; leaseDurationSeconds?: number } }>(['get', 'lease', name], { ns })).spec;
}

/** Resolves with the exit code, or `'running'` if the process has not exited within `ms`. */
async function exitWithin(op: OperatorProcess, ms: number): Promise<number | null | 'running'> {
  const timer = new AbortController();
  try {
    return await Promise.race([op.waitExit(), sleep(ms, 'running' as const, { signal: timer.signal })]);
  } finally {
    timer.abort(); // the losing sleep must not hold the test process open
  }
}

/** Epoch ms of a pino log line (`time` is an ISO string in this logger's format). */
function logTime(l: Record<string, unknown>): number {
  if (typeof l.time === 'number') return l.time;
  return typeof l.time === 'string' ? Date.parse(l.time) : 0;
}

// ---------------------------------------------------------------------------------------------

describe('fault tests (private control plane)', () => {
  before(async () => {
    pc = await PrivateCluster.start({ audit: true });
    await pc.installCrds();
    await createNamespace(pc.kubectl, RBAC_NS);
    await pc.kubectl(['apply', '-k', path.join(ROOT, 'config', 'rbac')]);
  });

  after(async () => {
    for (const p of procs) await p.kill().catch(() => undefined);
    // Keep the private cluster for diagnosis with RG_KEEP_FAULT_CLUSTER=1; `down` otherwise.
    if (pc && process.env.RG_KEEP_FAULT_CLUSTER !== '1') await pc.down();
  });

  it('SIGKILL during Stalled and during RollingBack: the clock continues from status, the undo happens once', async (t: TestContext) => {
    const { ns } = await scene('f-kill');
    let op = await startOperator(ns);
    const DEADLINE_S = 30;
    const DELAY_S = 20;
    await pc.apply(
      guard('decoder', ns, 'decoder', {
        suspectAfterSeconds: 3,
        progressDeadlineSeconds: DEADLINE_S,
        onStall: { action: 'Undo', delaySeconds: DELAY_S },
      }),
    );
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [op]);
    await setImage(ns, BROKEN);
    const genBroken = await templateGeneration(ns);

    const stalled = await waitGuard(ns, stateIs('Stalled'), 'Stalled', 120_000, [op]);
    assert.match(stalled.status?.message ?? '', /Undo to revision 1 \(\w+\) in \d+s unless the template changes/);
    const lastProgressAt = stalled.status!.rollout!.lastProgressAt;
    const undoDueAt = Date.parse(lastProgressAt) + (DEADLINE_S + DELAY_S) * 1000;
    await op.kill(); // crash while Stalled, with the undo scheduled
    assert.equal(await templateGeneration(ns), genBroken, 'no undo before the delay');
    // Nodes stop starting pods (kwok down), so the undo's rollback will stay in RollingBack until kwok returns.
    await pc.stopComponent('kwok');
    // The operator stays down for 8 s: this outage is the fault. An operator whose clock started over at
    // the restart would undo DELAY_S after it came back, ~10 s later than due.
    await sleep(8_000);
    op = await startOperator(ns);
    const readyAt = Date.now();

    const rolling = await waitGuard(
      ns,
      (g) => g.status?.state === 'RollingBack' && g.status.lastUndo?.result === 'Applied',
      'RollingBack',
      90_000,
      [op],
    );
    const undoAt = Date.parse(rolling.status!.lastUndo!.at);
    t.diagnostic(
      `undo due at lastProgressAt+${DEADLINE_S + DELAY_S}s; made ${((undoAt - undoDueAt) / 1000).toFixed(1)} s after that (restarted operator ready ${((undoDueAt - readyAt) / 1000).toFixed(1)} s before it was due)`,
    );
    assert.ok(undoAt >= undoDueAt - 1_000, `undo not early (at ${rolling.status!.lastUndo!.at}, due ${new Date(undoDueAt).toISOString()})`);
    assert.ok(
      undoAt <= Math.max(undoDueAt, readyAt) + 5_000,
      `undo on the original schedule (at ${rolling.status!.lastUndo!.at}, due ${new Date(undoDueAt).toISOString()})`,
    );
    const genAfterUndo = await templateGeneration(ns);
    assert.equal(genAfterUndo, genBroken + 1, 'the undo moved the template generation once');
    assert.equal(intentLogs(op).length, 1, 'one undo by the restarted operator');

    await op.kill(); // crash while RollingBack
    op = await startOperator(ns);
    // The new process has reconciled the guard (its gauge says RollingBack) and must not undo again.
    const gauge = { namespace: ns, guard: 'decoder', state: 'RollingBack' };
    await waitFor(
      async () => sum(await samples(op), 'rollout_guard_state', (l) => Object.entries(gauge).every(([k, v]) => l[k] === v)) === 1,
      {
        timeoutMs: 30_000,
        describe: 'restarted operator sees RollingBack',
      },
    );
    const mid = await getGuard(ns);
    assert.equal(mid.status?.state, 'RollingBack');
    assert.equal(mid.status?.lastUndo?.at, rolling.status!.lastUndo!.at, 'the undo record is untouched');
    assert.equal(await templateGeneration(ns), genAfterUndo);

    await pc.startComponent('kwok');
    const done = await waitGuard(ns, stateIs('RolledBack'), 'RolledBack', 120_000, [op]);
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    assert.equal(await templateGeneration(ns), genAfterUndo, 'the template moved exactly once for the undo');
    assert.equal(intentLogs(op).length, 0, 'the operator restarted during RollingBack never patched');
    const reasons = await reasonCounts(ns);
    for (const r of ['RolloutStalled', 'UndoStarted', 'UndoComplete'])
      assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
    await assertNoRepeatedTransition(ns);
    const ds = await pc.kubectlJson<{
      status: { desiredNumberScheduled: number; numberAvailable: number; updatedNumberScheduled: number };
    }>(['get', 'ds', 'decoder'], { ns });
    assert.deepEqual([ds.status.desiredNumberScheduled, ds.status.updatedNumberScheduled, ds.status.numberAvailable], [3, 3, 3]);
  });

  it('two replicas: only the leader writes; killing it mid-stall hands over within the lease and the job finishes once', async (t: TestContext) => {
    const { ns } = await scene('f-lead');
    const kc = await replicaKubeconfigs(ns, ['replica-a', 'replica-b']);
    const userA = `system:serviceaccount:${ns}:replica-a`;
    const userB = `system:serviceaccount:${ns}:replica-b`;
    const a = await startOperator(ns, replica(ns, 'replica-a', kc['replica-a']!));
    await waitFor(async () => sum(await samples(a), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'replica-a leads' });
    const b = await startOperator(ns, replica(ns, 'replica-b', kc['replica-b']!));

    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 15, onStall: { action: 'Undo' } }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [a, b]);
    await setImage(ns, BROKEN);
    const genBroken = await templateGeneration(ns);
    await waitGuard(ns, stateIs('Suspect'), 'Suspect', 60_000, [a, b]);

    // The follower: warm caches, ready, not leading, and silent.
    const [ma, mb] = [await samples(a), await samples(b)];
    assert.equal(sum(ma, 'rollout_guard_leader'), 1);
    assert.equal(sum(mb, 'rollout_guard_leader'), 0, 'replica-b follows');
    assert.ok(sum(ma, 'rollout_guard_api_requests_total', (l) => l.verb === 'PATCH') > 0, 'the leader wrote status');
    // The same writes, timed: every status PATCH the leader counted has its latency, and the leader's
    // workers took guard keys; the follower runs no worker, so it took none.
    const statusPatch = (l: Record<string, string>) => l.verb === 'PATCH' && l.resource === 'rolloutguards/status';
    assert.ok(sum(ma, 'rollout_guard_api_requests_total', statusPatch) > 0, 'the leader patched status');
    assert.equal(
      sum(ma, 'rollout_guard_api_request_duration_seconds_count', statusPatch),
      sum(ma, 'rollout_guard_api_requests_total', statusPatch),
      'every status PATCH is timed',
    );
    assert.ok(sum(ma, 'rollout_guard_queue_wait_seconds_count', (l) => l.queue === 'guards') > 0, "the leader's workers took guard keys");
    assert.equal(
      sum(mb, 'rollout_guard_queue_wait_seconds_count', (l) => l.queue === 'guards'),
      0,
      'the follower took no key',
    );
    assert.equal(writeRequests(mb), 0, 'the follower sent no write at all (no PATCH, POST, PUT or DELETE)');
    assert.equal((await b.get('/readyz')).status, 200, 'the follower is ready (warm caches)');
    assert.deepEqual(await auditWrites(userB), [], 'the API server recorded no write by replica-b');

    const killedAt = Date.now();
    await a.kill(); // the leader dies mid-stall, holding the lease
    await waitFor(async () => sum(await samples(b), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'replica-b takes over' });
    // The line is written before the gauge is set, but it reaches this process through a pipe while the
    // gauge came over HTTP: the read of /metrics can be handled first.
    const became = await waitFor(() => b.jsonLogs().find((l) => l.msg === 'became leader'), {
      timeoutMs: 5_000,
      describe: 'replica-b to log "became leader"',
    });
    const takeoverMs = logTime(became) - killedAt;
    t.diagnostic(`takeover ${takeoverMs} ms after SIGKILL of the leader (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms × [1, 2.2])`);
    assert.ok(
      takeoverMs >= 0 && takeoverMs <= LEASE_MS + 2.2 * RETRY_MS + 2_000,
      `takeover within about the lease duration (${takeoverMs} ms)`,
    );

    const done = await waitGuard(ns, stateIs('RolledBack'), 'RolledBack', 120_000, [b]);
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    assert.equal(await templateGeneration(ns), genBroken + 1, 'one undo');
    assert.equal(intentLogs(b).length, 1);
    const reasons = await reasonCounts(ns);
    for (const r of ['RolloutSuspect', 'RolloutStalled', 'UndoStarted', 'UndoComplete'])
      assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
    const dsPatches = [...(await auditWrites(userA)), ...(await auditWrites(userB))].filter(
      (w) => w.verb === 'patch' && w.what.startsWith('daemonsets/'),
    );
    assert.equal(dsPatches.length, 1, `one DaemonSet patch in the audit log: ${JSON.stringify(dsPatches)}`);
  });

  it('a leader paused (SIGSTOP) past its lease does not act when it wakes: it exits non-zero', async (t: TestContext) => {
    const { ns } = await scene('f-pause');
    const kc = await replicaKubeconfigs(ns, ['replica-a', 'replica-b']);
    const userA = `system:serviceaccount:${ns}:replica-a`;
    const a = await startOperator(ns, replica(ns, 'replica-a', kc['replica-a']!));
    await waitFor(async () => sum(await samples(a), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'replica-a leads' });
    const b = await startOperator(ns, replica(ns, 'replica-b', kc['replica-b']!));
    const DEADLINE_S = 15;
    await pc.apply(
      guard('decoder', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: DEADLINE_S, onStall: { action: 'Undo' } }),
    );
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [a, b]);
    await setImage(ns, BROKEN);
    const genBroken = await templateGeneration(ns);
    const suspect = await waitGuard(ns, stateIs('Suspect'), 'Suspect', 60_000, [a, b]);
    const deadline = Date.parse(suspect.status!.rollout!.lastProgressAt) + DEADLINE_S * 1000;

    a.signal('SIGSTOP'); // the leader freezes (a long GC pause, a stopped VM), still believing it leads
    const pausedAt = Date.now();
    await waitFor(async () => sum(await samples(b), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'replica-b takes over' });
    t.diagnostic(`replica-b leads ${Date.now() - pausedAt} ms after the leader froze`);
    await waitGuard(
      ns,
      (g) => g.status?.lastUndo?.result === 'Applied' || g.status?.lastUndo?.result === 'Complete',
      'undo by replica-b',
      60_000,
      [b],
    );
    // Keep the old leader frozen until 3 s past the deadline: its own requeue for the deadline is then
    // overdue and fires the moment it wakes, the worst case for acting on a lost lease.
    await sleep(Math.max(0, deadline + 3_000 - Date.now()));
    const wokeAt = Date.now();
    a.signal('SIGCONT');
    t.diagnostic(`leader paused for ${wokeAt - pausedAt} ms (lease ${LEASE_MS} ms)`);

    const code = await exitWithin(a, 20_000);
    assert.notEqual(code, 'running', 'the woken leader exits');
    assert.notEqual(code, 0, 'with a non-zero code (lost leadership)');
    const woke = a.jsonLogs().filter((l) => logTime(l) >= wokeAt);
    assert.ok(
      woke.some((l) => /lost leadership/.test(String(l.msg))),
      `it says it lost leadership:\n${a.logs.slice(-10).join('\n')}`,
    );
    t.diagnostic(
      `woken leader: ${woke
        .filter((l) => l.level === 'error')
        .map((l) => `${String(l.msg)} ${JSON.stringify({ ...l, level: undefined, time: undefined, msg: undefined, component: undefined })}`)
        .join(' | ')}; exit code ${String(code)}`,
    );
    const acted = woke.filter((l) =>
      ['state transition', 'undo: intent recorded, patching DaemonSet', 'undo dry run'].includes(String(l.msg)),
    );
    assert.deepEqual(acted, [], 'no reconcile decision acted on after waking');
    // The API server's record: nothing written by the old leader after it woke (not even a rejected write).
    assert.deepEqual(await auditWrites(userA, wokeAt - 1_000), [], 'no write by the woken leader reached the API server');
    const late = (await events(ns)).filter(
      (e) => e.reportingInstance === 'replica-a' && Date.parse(e.eventTime ?? e.metadata.creationTimestamp) >= wokeAt - 1_000,
    );
    assert.deepEqual(late, [], 'no Event from the woken leader');

    const done = await waitGuard(ns, stateIs('RolledBack'), 'RolledBack', 120_000, [b]);
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    assert.equal(await templateGeneration(ns), genBroken + 1, 'one undo');
    const reasons = await reasonCounts(ns);
    for (const r of ['RolloutSuspect', 'RolloutStalled', 'UndoStarted'])
      assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
  });

  it('kube-apiserver restarted while a rollout is in flight: informers relist, the stall is detected late by at most the outage', async (t: TestContext) => {
    const { ns } = await scene('f-api');
    // Leader election off: with it, an outage longer than the renew deadline ends leadership (and the
    // process) by design, as it does for client-go controllers. Policies on: every informer is exercised.
    const op = await startOperator(ns, { policies: true });
    let exited = false;
    void op.waitExit().then(() => (exited = true));
    const DEADLINE_S = 20;
    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: DEADLINE_S }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [op]);
    await setImage(ns, BROKEN);
    const suspect = await waitGuard(ns, stateIs('Suspect'), 'Suspect', 60_000, [op]);
    const deadline = Date.parse(suspect.status!.rollout!.lastProgressAt) + DEADLINE_S * 1000;

    const downAt = Date.now();
    await pc.stopComponent('kube-apiserver', { kill: true });
    // The API server stays down until 5 s past the deadline: the outage is the fault.
    await sleep(Math.max(0, deadline + 5_000 - Date.now()));
    await pc.startComponent('kube-apiserver');
    const upAt = Date.now();

    const stalled = await waitGuard(ns, stateIs('Stalled'), 'Stalled after the outage', 120_000, [op]);
    const detectedAt = Date.parse(condition(stalled, 'Stalled').lastTransitionTime);
    const outageMs = upAt - downAt;
    // upAt is taken when the CLI that restarted the API server returned, a few hundred ms after it was ready.
    t.diagnostic(
      `outage ${outageMs} ms (API server back ${upAt - deadline} ms after the deadline); Stalled written ${detectedAt - deadline} ms after the deadline, ${detectedAt - upAt} ms after the API server was back`,
    );
    assert.ok(detectedAt >= deadline, 'not before the deadline');
    assert.ok(detectedAt - deadline <= outageMs + 10_000, `late by at most the outage + 10 s (${detectedAt - deadline} ms)`);
    assert.equal(stalled.status?.rollout?.lastProgressAt, suspect.status?.rollout?.lastProgressAt, 'the clock was kept');

    assert.equal(exited, false, 'the operator never exited');
    assert.equal((await op.get('/readyz')).status, 200);
    const logs = op.jsonLogs().filter((l) => logTime(l) >= downAt);
    assert.ok(
      logs.some((l) => l.msg === 'list/watch failed, restarting after backoff'),
      'informers noticed the outage',
    );
    // Every informer reconnects by itself; its backoff (1 s doubling, capped at 30 s) bounds how long that takes.
    const informers = [
      ...new Set(
        op
          .jsonLogs()
          .filter((l) => l.msg === 'initial list complete')
          .map((l) => String(l.informer)),
      ),
    ];
    assert.equal(informers.length, 9, `nine informers (the Warning-Event watches included): ${informers.join(', ')}`);
    const relists = await waitFor(
      () => {
        const seen = new Map<string, number>();
        for (const l of op.jsonLogs()) if (l.msg === 'relisted' && logTime(l) >= downAt) seen.set(String(l.informer), logTime(l));
        return informers.every((i) => seen.has(i)) ? seen : undefined;
      },
      { timeoutMs: 45_000, describe: `every informer relisted (${informers.join(', ')})` },
    ).catch((e: unknown) => {
      const lines = op.logs.filter((l) => l.includes('"informer"') && !l.includes('"level":"debug"'));
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n${lines.slice(-60).join('\n')}`);
    });
    t.diagnostic(
      `informers relisted ${informers.map((i) => `${i} +${relists.get(i)! - upAt} ms`).join(', ')} after the API server was back`,
    );
    // The same, as a platform team's dashboard sees it.
    const m = await samples(op);
    for (const i of informers) {
      const of = (l: Record<string, string>): boolean => l.resource === i;
      assert.ok(sum(m, 'rollout_guard_informer_relists_total', of) >= 2, `${i}: relists counted in /metrics`);
      assert.ok(sum(m, 'rollout_guard_informer_restarts_total', of) >= 1, `${i}: the restart counted in /metrics`);
      assert.ok(
        sum(m, 'rollout_guard_informer_last_event_timestamp_seconds', of) * 1000 > downAt,
        `${i}: heard from the API server since the outage`,
      );
    }
    const reasons = await reasonCounts(ns);
    for (const r of ['RolloutSuspect', 'RolloutStalled']) assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
  });

  it('RBAC revoked: Undo reports UndoFailed (forbidden) once, no hot loop, the process stays up; restored, the next stall is undone', async (t: TestContext) => {
    const { ns } = await scene('f-rbac');
    const saKubeconfig = await pc.serviceAccountKubeconfig(RBAC_NS, 'rollout-guard');
    const op = await startOperator(ns, {
      kubeconfig: saKubeconfig,
      policies: true,
      leaderElect: true,
      leaseNamespace: RBAC_NS,
      identity: 'rbac-a',
      extraArgs: ['--lease-name=faults-rbac'],
    });
    let exited = false;
    void op.waitExit().then(() => (exited = true));
    await waitFor(async () => sum(await samples(op), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'leads' });
    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 6, onStall: { action: 'Undo' } }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [op]);

    await pc.kubectl(['delete', 'clusterrolebinding', 'rollout-guard-undo']);
    await waitFor(async () => !(await canI('patch', 'daemonsets', ns)), { timeoutMs: 30_000, describe: 'patch daemonsets revoked' });
    await setImage(ns, BROKEN);
    const failed = await waitGuard(ns, (g) => g.status?.lastUndo?.result === 'Failed', 'UndoFailed', 60_000, [op]);
    assert.match(failed.status!.lastUndo!.message, /forbidden/);
    assert.equal(failed.status?.state, 'Stalled');
    assert.equal(condition(failed, 'RolledBack').reason, 'UndoFailed');

    // A window of 15 s: nothing retries in a loop.
    const m0 = await samples(op);
    const windowStart = Date.now();
    await holdsFor(async () => !exited && (await reasonCounts(ns)).UndoFailed === 1, {
      durationMs: 15_000,
      intervalMs: 3_000,
      describe: 'one UndoFailed event, process up',
    });
    const m1 = await samples(op);
    const seconds = (Date.now() - windowStart) / 1000;
    const notLease = (l: Record<string, string>): boolean => l.resource !== 'leases' && l.verb !== 'WATCH';
    const requests = sum(m1, 'rollout_guard_api_requests_total', notLease) - sum(m0, 'rollout_guard_api_requests_total', notLease);
    const errors = sum(m1, 'rollout_guard_reconcile_errors_total') - sum(m0, 'rollout_guard_reconcile_errors_total');
    t.diagnostic(
      `over ${seconds.toFixed(0)} s after UndoFailed: ${requests} API requests (leases and watches aside), ${errors} reconcile errors`,
    );
    assert.ok(requests <= 10, `no hot loop: ${requests} requests in ${seconds.toFixed(0)} s`);
    assert.ok(errors <= 1, `no error loop: ${errors} reconcile errors`);
    const dsPatches = m1.filter(
      (s) => s.name === 'rollout_guard_api_requests_total' && s.labels.verb === 'PATCH' && s.labels.resource === 'daemonsets',
    );
    assert.deepEqual(
      dsPatches.map((s) => [s.labels.code, s.value]),
      [['403', 1]],
      'one forbidden DaemonSet patch, never retried',
    );
    assert.equal((await reasonCounts(ns, 'DaemonSet')).UndoFailed, 1);

    // The binding comes back: a new broken revision is undone.
    await pc.kubectl(['apply', '-k', path.join(ROOT, 'config', 'rbac')]);
    await waitFor(() => canI('patch', 'daemonsets', ns), { timeoutMs: 30_000, describe: 'patch daemonsets restored' });
    await setImage(ns, 'registry.local/decoder:2');
    await waitGuard(ns, stateIs('Healthy'), 'Healthy on the fix', 90_000, [op]);
    await setImage(ns, 'registry.local/decoder:3-broken');
    const gen3 = await templateGeneration(ns);
    const undone = await waitGuard(
      ns,
      (g) => g.status?.state === 'RolledBack' && g.status.lastUndo?.result === 'Complete',
      'RolledBack',
      90_000,
      [op],
    );
    assert.equal(await templateGeneration(ns), gen3 + 1, 'one undo');
    const ds = await pc.kubectlJson<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(['get', 'ds', 'decoder'], {
      ns,
    });
    assert.equal(ds.spec.template.spec.containers[0]?.image, 'registry.local/decoder:2', 'back on the last good revision');
    assert.ok(undone.status?.lastUndo);
    assert.equal(exited, false, 'the process stayed up throughout');
  });

  it('graceful SIGTERM: exit 0 within the shutdown budget, the Lease released; the next leader continues the clock', async (t: TestContext) => {
    const { ns } = await scene('f-term');
    const BUDGET_MS = 5_000;
    // client-go's default lease timings: a successor that had to wait for expiry would need 15 s.
    const opts = (id: string): Partial<OperatorOptions> => ({
      leaderElect: true,
      leaseNamespace: ns,
      identity: id,
      extraArgs: ['--lease-name=rollout-guard', `--shutdown-budget-ms=${BUDGET_MS}`],
    });
    const a = await startOperator(ns, opts('term-a'));
    await waitFor(async () => sum(await samples(a), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'term-a leads' });
    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 15 }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [a]);
    await setImage(ns, BROKEN);
    const suspect = await waitGuard(ns, stateIs('Suspect'), 'Suspect', 60_000, [a]);
    assert.equal((await lease(ns, 'rollout-guard')).holderIdentity, 'term-a');

    const termAt = Date.now();
    a.signal('SIGTERM');
    const code = await exitWithin(a, BUDGET_MS + 10_000);
    const tookMs = Date.now() - termAt;
    t.diagnostic(`SIGTERM → exit ${String(code)} in ${tookMs} ms (budget ${BUDGET_MS} ms)`);
    assert.equal(code, 0);
    assert.ok(tookMs <= BUDGET_MS, `within the budget (${tookMs} ms)`);
    const spec = await lease(ns, 'rollout-guard');
    assert.equal(spec.holderIdentity ?? '', '', 'the Lease was released');
    const msgs = a.jsonLogs().map((l) => l.msg);
    for (const m of ['shutting down', 'released leader lease', 'stopped']) assert.ok(msgs.includes(m), `logged "${m}"`);

    const startedB = Date.now();
    const b = await startOperator(ns, opts('term-b'));
    await waitFor(async () => sum(await samples(b), 'rollout_guard_leader') === 1, { timeoutMs: 30_000, describe: 'term-b leads' });
    t.diagnostic(`successor led ${Date.now() - startedB} ms after its start (a lease that had to expire: 15 s)`);
    const stalled = await waitGuard(ns, stateIs('Stalled'), 'Stalled', 60_000, [b]);
    assert.equal(stalled.status?.rollout?.lastProgressAt, suspect.status?.rollout?.lastProgressAt, 'the clock continued');
    const reasons = await reasonCounts(ns);
    for (const r of ['RolloutSuspect', 'RolloutStalled']) assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
  });

  it('SIGTERM while the API server hangs (SIGSTOP): the in-flight reconcile is abandoned within the budget, exit 0', async (t: TestContext) => {
    const { ns } = await scene('f-hang');
    const BUDGET_MS = 3_000;
    const op = await startOperator(ns, { extraArgs: [`--shutdown-budget-ms=${BUDGET_MS}`] });
    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 8 }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [op]);
    await setImage(ns, BROKEN);
    await waitGuard(ns, stateIs('Suspect'), 'Suspect', 60_000, [op]);
    const frozenAt = Date.now();
    pc.signalComponent('kube-apiserver', 'SIGSTOP'); // the API server accepts connections but never answers
    try {
      // At the deadline the operator decides Stalled and sends the status patch, which hangs.
      await waitFor(() => op.jsonLogs().some((l) => l.msg === 'state transition' && l.to === 'Stalled' && logTime(l) >= frozenAt), {
        timeoutMs: 30_000,
        describe: 'a reconcile in flight',
      });
      const termAt = Date.now();
      op.signal('SIGTERM');
      const code = await exitWithin(op, BUDGET_MS + 10_000);
      const tookMs = Date.now() - termAt;
      t.diagnostic(`SIGTERM with a hung request in flight → exit ${String(code)} in ${tookMs} ms (budget ${BUDGET_MS} ms)`);
      assert.equal(code, 0);
      assert.ok(tookMs <= BUDGET_MS + 1_500, `the hung reconcile was abandoned at the budget (${tookMs} ms)`);
    } finally {
      pc.signalComponent('kube-apiserver', 'SIGCONT');
    }
    // Status is not lost: a new operator brings the guard to Stalled. The abandoned status patch may still
    // be applied once the API server thaws (the request had been sent); the pass that sent it never got to
    // create its RolloutStalled Event, and the next one sees no transition to announce. So the Event can
    // be missing here (a known limit: Events follow a successful status write), but never doubled.
    const op2 = await startOperator(ns);
    const stalled = await waitGuard(ns, stateIs('Stalled'), 'Stalled', 90_000, [op2]);
    assert.ok(stalled.status?.rollout);
    assert.equal(condition(stalled, 'Stalled').status, 'True');
    const reasons = await reasonCounts(ns);
    t.diagnostic(`events after the abandoned pass: ${JSON.stringify(reasons)}`);
    assert.equal(reasons.RolloutSuspect, 1);
    assert.ok((reasons.RolloutStalled ?? 0) <= 1, 'never a duplicate Stalled event');
  });

  // Last: compacting and restarting etcd is the most disruptive fault; the API server's watch cache
  // rebuilds after it, and no other case should run in its aftermath.
  it('410 Gone after etcd compaction: the informers relist, changes made meanwhile are neither lost nor doubled', async (t: TestContext) => {
    const { ns } = await scene('f-gone');
    const op = await startOperator(ns, { policies: true });
    let exited = false;
    void op.waitExit().then(() => (exited = true));
    await pc.apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 10 }));
    await pc.apply(guard('doomed', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 10 }));
    await waitGuard(ns, stateIs('Healthy'), 'Healthy', 60_000, [op]);
    const gaugeOf =
      (g: string) =>
      (l: Record<string, string>): boolean =>
        l.namespace === ns && l.guard === g;
    await waitFor(async () => sum(await samples(op), 'rollout_guard_state', gaugeOf('doomed')) === 1, {
      timeoutMs: 30_000,
      describe: 'guard doomed reconciled',
    });
    const oldRv = (await pc.kubectlJson<{ metadata: { resourceVersion: string } }>(['get', 'ds', 'decoder'], { ns })).metadata
      .resourceVersion;

    // How the 410 is produced for real: the API server's watch cache (cacher) follows etcd with a watch of
    // its own. Compacting etcd past that watch's position and restarting etcd makes the watch resume from a
    // compacted revision; the cacher then relists at the current revision and ends every client watch
    // cleanly. A client that re-watches from its old resourceVersion gets 410 Gone. (A restart of the API
    // server alone never yields a 410 here: the broken stream is an error, and after errors the informer
    // relists instead of re-watching.) The operator is frozen meanwhile, so it re-watches only once the
    // cache has been rebuilt; and the changes below happen while it cannot see them.
    const frozenAt = Date.now();
    op.signal('SIGSTOP');
    await setImage(ns, BROKEN);
    await pc.kubectl(['delete', 'rolloutguard', 'doomed'], { ns });
    await waitFor(
      async () => {
        const pods = await pc.kubectlJson<{
          items: Array<{
            spec: { containers: Array<{ image: string }> };
            status: { containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }> };
          }>;
        }>(['get', 'pods', '-l', 'app=decoder'], { ns });
        return pods.items.some(
          (p) => p.spec.containers[0]?.image === BROKEN && p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff',
        );
      },
      { timeoutMs: 60_000, describe: 'the broken pod is stuck' },
    );
    // Writes elsewhere move etcd's revision past the position of every watch the cacher holds.
    await pc.kubectl(['create', 'configmap', 'churn-1', '-n', 'default'], { allowFail: true });
    await pc.kubectl(['create', 'configmap', 'churn-2', '-n', 'default'], { allowFail: true });
    const revision = await pc.etcdRevision();
    await pc.etcdCompact(revision);
    await pc.restartComponent('etcd');
    await waitFor(async () => (await pc.rawGet('/readyz')).status === 200, { timeoutMs: 60_000, describe: 'API server ready' });
    // What any client now gets for the operator's old resourceVersion: 410.
    const probe = await waitFor(
      async () => {
        const r = await pc.rawGet(`/apis/apps/v1/namespaces/${ns}/daemonsets?watch=1&resourceVersion=${oldRv}&timeoutSeconds=2`);
        return r.status === 410 || r.body.includes('"code":410') ? r : undefined;
      },
      { timeoutMs: 30_000, describe: `410 for a watch from resourceVersion ${oldRv}` },
    );
    t.diagnostic(
      `etcd compacted at revision ${revision}; a watch from the operator's old DaemonSet resourceVersion ${oldRv} now answers: ${probe.body.slice(0, 200)}`,
    );
    const thawedAt = Date.now();
    op.signal('SIGCONT');

    const gone = await waitFor(
      () => {
        const l = op.jsonLogs().filter((x) => x.msg === 'watch history expired (410), relisting' && logTime(x) >= thawedAt);
        return l.length > 0 ? l : undefined;
      },
      { timeoutMs: 30_000, describe: 'the operator logs a 410 relist' },
    );
    const goneInformers = [...new Set(gone.map((l) => String(l.informer)))];
    await waitFor(() => op.jsonLogs().some((l) => l.msg === 'relisted' && logTime(l) >= thawedAt), {
      timeoutMs: 30_000,
      describe: 'relisted',
    });
    t.diagnostic(`410 relists by informers: ${goneInformers.join(', ')}`);

    const stalled = await waitGuard(ns, stateIs('Stalled'), 'Stalled', 90_000, [op]);
    assert.ok(stalled.status?.rollout, 'the rollout made while the operator was blind was found');
    // The guard deleted while the operator was blind is forgotten (its state series is gone).
    await waitFor(async () => !(await samples(op)).some((s) => s.name === 'rollout_guard_state' && gaugeOf('doomed')(s.labels)), {
      timeoutMs: 30_000,
      describe: 'deleted guard forgotten',
    });
    // Counted from the freeze: a setup slowed by other suites may have emitted a rollout of its own.
    const reasons = await reasonCounts(ns, 'RolloutGuard', frozenAt);
    for (const r of ['RolloutStarted', 'RolloutStalled']) assert.equal(reasons[r], 1, `one ${r} event (got ${JSON.stringify(reasons)})`);
    await assertNoRepeatedTransition(ns);
    assert.equal(exited, false, 'the operator never exited');
  });
});
