/**
 * End to end: a CRD older than the operator, on a private control plane (`.cluster-faults-<pid>`, its
 * own ports) — CRDs are cluster-scoped, and replacing the rolloutguards CRD of the shared cluster would
 * change the schema under every suite running beside this one.
 *
 * The private cluster gets config/crd with one value removed from the enum of status.cause:
 * ImagePullFailure, the cause a kwok `broken` image produces (cluster/stages.yaml: the container waits in
 * ImagePullBackOff). The operator's status write naming it is refused by the API server with 422 Invalid;
 * the operator must say so — an error log line, the metric rollout_guard_status_writes_refused_total and
 * Ready=False CRDOutdated in a status the old schema accepts — and write the full status once the current
 * CRD is applied.
 *
 * Runs alone (scripts/test.mjs ALONE): `npx tsc -p tsconfig.json && node --test --test-timeout=600000 dist/test/e2e/crdSkew.test.js`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { decoderDaemonSet, waitFor } from '../support/cluster.js';
import { OperatorProcess, ROOT, guard } from '../support/operator.js';
import { waitForCrdsEstablished } from '../../cluster/kubectl.js';
import { PrivateCluster } from '../../cluster/privateCluster.js';
import { CRD_OUTDATED_MSG } from '../../src/reconcile/schemaOutdated.js';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface GuardObj {
  status?: { state?: string; cause?: string; owner?: string; message?: string; conditions?: Condition[] };
}
/** The parts of a CustomResourceDefinition this test reads and edits. */
interface Crd {
  spec: {
    versions: Array<{
      name: string;
      schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, { enum?: string[] }> } } } };
    }>;
  };
}

const GOOD = 'registry.local/decoder:1';
const BROKEN = 'registry.local/decoder:2-broken';
/** The cause the broken image produces, and the one value the old CRD does not know. */
const REMOVED = 'ImagePullFailure';
const CRD_NAME = 'rolloutguards.rolloutguard.dev';
const FAST = { suspectAfterSeconds: 2, progressDeadlineSeconds: 4, onStall: { action: 'Report' } };

let pc: PrivateCluster;
let op: OperatorProcess | undefined;

/** config/crd/rolloutguards.yaml with REMOVED taken out of status.cause's enum in every version. */
async function olderCrd(): Promise<Crd> {
  const crd = parseYaml(await readFile(path.join(ROOT, 'config', 'crd', 'rolloutguards.yaml'), 'utf8')) as Crd;
  for (const v of crd.spec.versions) {
    const cause = v.schema.openAPIV3Schema.properties.status.properties.cause;
    const values = cause?.enum ?? [];
    assert.ok(cause && values.includes(REMOVED), `config/crd lists ${REMOVED} in ${v.name} status.cause`);
    cause.enum = values.filter((c) => c !== REMOVED);
  }
  return crd;
}

/** The enum of status.cause the API server holds now. */
async function servedCauses(): Promise<string[]> {
  const crd = await pc.kubectlJson<Crd>(['get', 'crd', CRD_NAME]);
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties.status.properties.cause?.enum ?? [];
}

const getGuard = (ns: string): Promise<GuardObj> => pc.kubectlJson<GuardObj>(['get', 'rg', 'decoder'], { ns });
const ready = (g: GuardObj): Condition | undefined => g.status?.conditions?.find((c) => c.type === 'Ready');

async function waitGuard(ns: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> {
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
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n${op?.logs.slice(-25).join('\n') ?? ''}`,
    );
  }
  return last!;
}

/** The sum of a metric's samples on /metrics whose labels include `labels` (Prometheus text format). */
async function metricSum(name: string, labels: Record<string, string>): Promise<number> {
  const { status, body } = await op!.get('/metrics');
  assert.equal(status, 200, 'metrics endpoint answers');
  let total = 0;
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) have[l[1]!] = l[2]!;
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[3]);
  }
  return total;
}

describe('a CRD older than the operator (private control plane)', { timeout: 600_000 }, () => {
  before(async () => {
    pc = await PrivateCluster.start();
    await pc.installCrds(); // both CRDs, current
    // Then the rolloutguards CRD one release older: without REMOVED in status.cause.
    await pc.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify(await olderCrd()) });
    await waitForCrdsEstablished(pc.kubectl, [CRD_NAME]);
    await waitFor(async () => !(await servedCauses()).includes(REMOVED), { timeoutMs: 30_000, describe: 'the older CRD served' });
  });

  after(async () => {
    await op?.kill().catch(() => undefined);
    // Keep the private cluster for diagnosis with RG_KEEP_FAULT_CLUSTER=1; `down` otherwise.
    if (pc && process.env.RG_KEEP_FAULT_CLUSTER !== '1') await pc.down();
  });

  it('a status the CRD refuses is logged, counted and reported as Ready=False CRDOutdated; applying config/crd recovers it', async () => {
    // 1. A healthy DaemonSet on 3 kwok nodes, guarded by a running operator.
    const ns = await pc.createNamespace('crdskew');
    const pool = await pc.createNodePool('crdskew', 3);
    await pc.apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: GOOD }));
    await pc.kubectl(['rollout', 'status', 'ds/decoder', '--timeout=120s'], { ns });
    // `rollout status` also succeeds while DESIRED is still 0: wait for an available pod on every node.
    await waitFor(
      async () => {
        const ds = await pc.kubectlJson<{ status: { desiredNumberScheduled?: number; numberAvailable?: number } }>(
          ['get', 'ds', 'decoder'],
          {
            ns,
          },
        );
        return ds.status.desiredNumberScheduled === 3 && ds.status.numberAvailable === 3;
      },
      { timeoutMs: 120_000, describe: 'decoder available on all 3 nodes' },
    );
    op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig });
    await pc.apply(guard('decoder', ns, 'decoder', FAST));
    await waitGuard(ns, (g) => g.status?.state === 'Healthy', 'Healthy');

    // 2. A broken image: the rollout stalls on ImagePullBackOff, a cause the old CRD does not know.
    await pc.kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns });
    const g = await waitGuard(ns, (x) => ready(x)?.reason === 'CRDOutdated', 'Ready=False CRDOutdated');
    const cond = ready(g)!;
    assert.equal(cond.status, 'False');
    assert.ok(cond.message.startsWith(`${CRD_OUTDATED_MSG}; `), cond.message);
    assert.match(cond.message, new RegExp(`status\\.cause: Unsupported value: "${REMOVED}"`));
    assert.notEqual(g.status?.cause, REMOVED, 'the reduced status carries no value the old CRD does not know');

    // 3. The operator's log names the problem at error level, once per refusal, with the API server's message.
    await waitFor(async () => (await metricSum('rollout_guard_status_writes_refused_total', { reason: 'SchemaOutdated' })) >= 1, {
      timeoutMs: 10_000,
      describe: 'rollout_guard_status_writes_refused_total{reason="SchemaOutdated"} on /metrics',
    });
    const errors = op.jsonLogs().filter((l) => l.msg === CRD_OUTDATED_MSG);
    assert.ok(errors.length >= 1, `the log says "${CRD_OUTDATED_MSG}"`);
    for (const l of errors) {
      assert.equal(l.level, 'error', 'logged at error level');
      assert.match(String(l.refused), /^422 Invalid: .* is invalid: .*status\.cause: Unsupported value/);
    }
    const refusals = errors.map((l) => String(l.refused));
    assert.equal(new Set(refusals).size, refusals.length, `each refusal logged once: ${refusals.join(' | ')}`);

    // 4. The current CRD applied: the next pass (an event, or the one-minute look again) writes the full status.
    await pc.installCrds();
    await waitFor(async () => (await servedCauses()).includes(REMOVED), { timeoutMs: 30_000, describe: 'the current CRD served' });
    const recovered = await waitGuard(
      ns,
      (x) => x.status?.cause === REMOVED && ready(x)?.reason !== 'CRDOutdated',
      `cause ${REMOVED} written, Ready no longer CRDOutdated`,
      150_000,
    );
    assert.ok(['Progressing', 'Suspect', 'Stalled'].includes(recovered.status?.state ?? ''), JSON.stringify(recovered.status));
    assert.ok(
      op.jsonLogs().some((l) => l.msg === 'the installed CRD accepts the status again'),
      'the operator says the refusal is over',
    );
    await waitGuard(ns, (x) => x.status?.state === 'Stalled' && x.status.cause === REMOVED, 'Stalled with its cause');
  });
});
