/**
 * End to end: bad input, against the real control plane. Each case is one test.
 *
 * 1. Invalid RolloutGuards and RolloutGuardPolicies are rejected by the API server itself (OpenAPI schema
 *    and CEL rules in config/crd), with a message a person can act on; the operator never sees them.
 * 2. Valid objects describing awkward worlds (an OnDelete target, a pruned revision history, look-alike
 *    pods, a 30-node DaemonSet, guards and targets deleted in every order) are handled by a running
 *    operator: nothing crashes and every case ends in a clear state and condition.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { STATUS_LIST_CAP } from '../../src/domain/split.js';
import { GUARD_DEFAULTS } from '../../src/api/defaults.js';
import {
  POOL_LABEL,
  createNamespace,
  createNodePool,
  daemonSetRow,
  decoderDaemonSet,
  ensureCluster,
  holdsFor,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { OperatorProcess, ROOT, apply, guard, installCrds } from '../support/operator.js';

interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Generation {
  revision?: number;
  hash: string;
  images: string[];
  nodes: number;
  ready: number;
}
interface GuardObj {
  metadata: { name: string; generation: number; uid: string };
  spec: { targetRef: Record<string, unknown> } & Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    state?: string;
    cause?: string;
    message?: string;
    undoSkipped?: { reason: string; message: string };
    desired?: number;
    ready?: number;
    currentRevision?: { revision?: number; hash: string };
    generations?: Generation[];
    blockedNodes?: Array<{ node: string; pod?: string; reason: string; message: string }>;
    blockedNodeCount?: number;
    emptyNodes?: Array<{ node: string }>;
    emptyNodeCount?: number;
    rollout?: unknown;
    lastUndo?: unknown;
    undoPlan?: { nodes: number; toRevision?: number };
    conditions?: Cond[];
  };
}
interface Revision {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: Array<{ uid: string; controller?: boolean }> };
  revision: number;
}

const API = 'rolloutguard.dev/v1alpha1';
/** Short timings so stalls are reached within seconds. */
const FAST = { suspectAfterSeconds: 2, progressDeadlineSeconds: 4 };
/**
 * Stalled on the broken image. With FAST's 4 s deadline a loaded control plane may not have created the
 * new pod in time, and the guard rightly stalls first on an empty node it cannot explain (Unknown); the
 * cases below are about the stall on the image.
 */
const pullStalled = (x: GuardObj): boolean => x.status?.state === 'Stalled' && x.status.cause === 'ImagePullFailure';
const GOOD = 'registry.local/decoder:1';
const BROKEN = 'registry.local/decoder:2-broken';

const cond = (g: GuardObj, type: string): Cond | undefined => g.status?.conditions?.find((c) => c.type === type);

// ---------------------------------------------------------------------------------------------------
// Helpers for the API-server matrix.

/**
 * Applies `obj` the way a user would (`kubectl apply`, i.e. strict field validation) and expects the
 * API server to refuse it; returns kubectl's error text. `dryRun` keeps a wrongly accepted object out
 * of the shared cluster (used for cluster-scoped policies, which would act on other suites' DaemonSets).
 */
async function refusal(obj: unknown, opts: { ns?: string; dryRun?: boolean } = {}): Promise<string> {
  const res = await kubectl(['apply', ...(opts.dryRun ? ['--dry-run=server'] : []), '-f', '-'], {
    input: JSON.stringify(obj),
    allowFail: true,
    ...(opts.ns ? { ns: opts.ns } : {}),
  });
  assert.notEqual(res.code, 0, `expected the API server to refuse it, but: ${res.stdout.trim()}`);
  return res.stderr;
}

function rawGuard(name: string, spec?: unknown): Record<string, unknown> {
  return { apiVersion: API, kind: 'RolloutGuard', metadata: { name }, ...(spec === undefined ? {} : { spec }) };
}

function policy(name: string, spec: unknown): Record<string, unknown> {
  return { apiVersion: API, kind: 'RolloutGuardPolicy', metadata: { name }, spec };
}

const ref = { kind: 'DaemonSet', name: 'decoder' };

/** Invalid guards: what a user might write, and the sentence the API server answers with. */
const INVALID_GUARDS: ReadonlyArray<{ case: string; obj: Record<string, unknown>; message: RegExp }> = [
  { case: 'no spec at all', obj: rawGuard('g'), message: /spec: Required value/ },
  // Neither targetRef nor selector, both, or a selector that would select every DaemonSet.
  { case: 'neither targetRef nor selector', obj: rawGuard('g', {}), message: /set either targetRef or selector/ },
  {
    case: 'both targetRef and selector',
    obj: rawGuard('g', { targetRef: ref, selector: { matchLabels: { tier: 'agent' } } }),
    message: /set either targetRef or selector/,
  },
  {
    case: 'an empty selector',
    obj: rawGuard('g', { selector: {} }),
    message:
      /selector must not be empty \(it would select every workload of the namespace\): give at least one matchLabels entry or matchExpressions requirement/,
  },
  {
    case: 'a selector with empty matchLabels and matchExpressions',
    obj: rawGuard('g', { selector: { matchLabels: {}, matchExpressions: [] } }),
    message: /selector must not be empty/,
  },
  {
    case: 'a selector operator In without values',
    obj: rawGuard('g', { selector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } }),
    message: /In and NotIn need values; Exists and DoesNotExist take none/,
  },
  {
    case: 'targetRef without a name',
    obj: rawGuard('g', { targetRef: { kind: 'DaemonSet' } }),
    message: /spec\.targetRef\.name: Required value/,
  },
  {
    case: 'targetRef.apiVersion other than apps/v1',
    obj: rawGuard('g', { targetRef: { apiVersion: 'extensions/v1beta1', kind: 'DaemonSet', name: 'decoder' } }),
    message: /spec\.targetRef\.apiVersion: Unsupported value: "extensions\/v1beta1": supported values: "apps\/v1"/,
  },
  {
    case: 'wrong kind (ReplicaSet)',
    obj: rawGuard('g', { targetRef: { kind: 'ReplicaSet', name: 'decoder' } }),
    message: /spec\.targetRef\.kind: Unsupported value: "ReplicaSet": supported values: "DaemonSet", "StatefulSet", "Deployment"/,
  },
  {
    case: 'targetRef.name that is not an object name',
    obj: rawGuard('g', { targetRef: { kind: 'DaemonSet', name: 'Decoder_1' } }),
    message: /spec\.targetRef\.name in body should match/,
  },
  {
    case: 'negative suspectAfterSeconds',
    obj: rawGuard('g', { targetRef: ref, suspectAfterSeconds: -1 }),
    message: /spec\.suspectAfterSeconds in body should be greater than or equal to 1/,
  },
  {
    case: 'negative progressDeadlineSeconds',
    obj: rawGuard('g', { targetRef: ref, progressDeadlineSeconds: -5 }),
    message: /spec\.progressDeadlineSeconds in body should be greater than or equal to 2/,
  },
  {
    case: 'negative onStall.delaySeconds',
    obj: rawGuard('g', { targetRef: ref, onStall: { delaySeconds: -1 } }),
    message: /spec\.onStall\.delaySeconds in body should be greater than or equal to 0/,
  },
  {
    case: 'a duration string instead of seconds',
    obj: rawGuard('g', { targetRef: ref, progressDeadlineSeconds: '10m' }),
    message: /spec\.progressDeadlineSeconds in body must be of type integer/,
  },
  {
    case: 'suspectAfterSeconds > progressDeadlineSeconds (swapped)',
    obj: rawGuard('g', { targetRef: ref, suspectAfterSeconds: 600, progressDeadlineSeconds: 300 }),
    message:
      /spec: Invalid value: suspectAfterSeconds must be less than progressDeadlineSeconds \(a field left out takes its default: 120 and 600\)/,
  },
  {
    case: 'suspectAfterSeconds = progressDeadlineSeconds',
    obj: rawGuard('g', { targetRef: ref, suspectAfterSeconds: 300, progressDeadlineSeconds: 300 }),
    message: /suspectAfterSeconds must be less than progressDeadlineSeconds/,
  },
  {
    // Defaults are applied before validation: only one field set still compares against the other's default.
    case: 'suspectAfterSeconds alone, above the default deadline (600)',
    obj: rawGuard('g', { targetRef: ref, suspectAfterSeconds: 700 }),
    message: /suspectAfterSeconds must be less than progressDeadlineSeconds \(a field left out takes its default/,
  },
  {
    case: 'progressDeadlineSeconds alone, below the default suspect time (120)',
    obj: rawGuard('g', { targetRef: ref, progressDeadlineSeconds: 60 }),
    message: /suspectAfterSeconds must be less than progressDeadlineSeconds \(a field left out takes its default/,
  },
  {
    case: 'targetKinds with a targetRef',
    obj: rawGuard('g', { targetRef: ref, targetKinds: ['StatefulSet'] }),
    message: /targetKinds goes with selector: a targetRef names its kind in targetRef\.kind/,
  },
  {
    case: 'an unknown targetKinds entry',
    obj: rawGuard('g', { selector: { matchLabels: { tier: 'db' } }, targetKinds: ['ReplicaSet'] }),
    message: /spec\.targetKinds\[0\]: Unsupported value: "ReplicaSet": supported values: "DaemonSet", "StatefulSet", "Deployment"/,
  },
  {
    case: 'unknown onStall.action',
    obj: rawGuard('g', { targetRef: ref, onStall: { action: 'Delete' } }),
    message: /spec\.onStall\.action: Unsupported value: "Delete": supported values: "Report", "Undo"/,
  },
  {
    // 64 characters is a valid object name (DNS subdomain, 253); only our CEL rule stops it.
    case: 'a name over 63 characters',
    obj: rawGuard('a'.repeat(64), { targetRef: ref }),
    message: /metadata\.name must be at most 63 characters \(it is used in Event and label values\)/,
  },
];

/** Invalid policies (cluster-scoped: always a server-side dry run, see {@link refusal}). */
const INVALID_POLICIES: ReadonlyArray<{ case: string; obj: Record<string, unknown>; message: RegExp }> = [
  {
    case: 'an unknown selector operator',
    obj: policy('bi-bad-op', { selector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['a'] }] } }),
    message:
      /spec\.selector\.matchExpressions\[0\]\.operator: Unsupported value: "Equals": supported values: "In", "NotIn", "Exists", "DoesNotExist"/,
  },
  {
    case: 'In without values',
    obj: policy('bi-in-novalues', { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } }),
    message: /spec\.namespaceSelector\.matchExpressions\[0\]: Invalid value: In and NotIn need values; Exists and DoesNotExist take none/,
  },
  {
    case: 'Exists with values',
    obj: policy('bi-exists-values', { selector: { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] } }),
    message: /spec\.selector\.matchExpressions\[0\]: Invalid value: In and NotIn need values; Exists and DoesNotExist take none/,
  },
  {
    case: 'a kind listed twice',
    obj: policy('bi-kind-twice', { targetKinds: ['DaemonSet', 'DaemonSet'] }),
    message: /spec\.targetKinds\[1\]: Duplicate value: "DaemonSet"/,
  },
  {
    case: 'a name over 40 characters',
    obj: policy('p'.repeat(41), {}),
    message: /metadata\.name must be at most 40 characters \(it prefixes generated guard names and is a label value\)/,
  },
  {
    case: 'swapped guard timings',
    obj: policy('bi-swapped', { guard: { suspectAfterSeconds: 50, progressDeadlineSeconds: 10 } }),
    message: /spec\.guard: Invalid value: suspectAfterSeconds must be less than progressDeadlineSeconds/,
  },
  {
    // Every guard generated from this would be refused by the RolloutGuard CRD (the deadline defaults
    // to 600), so the policy itself must be refused.
    case: 'guard.suspectAfterSeconds alone, above the guard default deadline',
    obj: policy('bi-suspect-only', { guard: { suspectAfterSeconds: 700 } }),
    message:
      /spec\.guard: Invalid value: suspectAfterSeconds must be less than progressDeadlineSeconds \(a field left out takes the guard default: 120 and 600\)/,
  },
  {
    case: 'guard.progressDeadlineSeconds alone, below the guard default suspect time',
    obj: policy('bi-deadline-only', { guard: { progressDeadlineSeconds: 60 } }),
    message: /spec\.guard: Invalid value: suspectAfterSeconds must be less than progressDeadlineSeconds/,
  },
  {
    case: 'an unknown guard.onStall.action',
    obj: policy('bi-bad-action', { guard: { onStall: { action: 'Delete' } } }),
    message: /spec\.guard\.onStall\.action: Unsupported value: "Delete"/,
  },
];

// ---------------------------------------------------------------------------------------------------

describe('bad input', () => {
  before(async () => {
    await ensureCluster();
    await installCrds();
  });

  describe('rejected by the API server with a readable message', { concurrency: true }, () => {
    let ns: string;
    let cleanup: (() => Promise<void>) | undefined;
    before(async () => {
      const n = await createNamespace('bi-api');
      ns = n.name;
      cleanup = n.cleanup;
    });
    after(async () => {
      await cleanup?.();
    });

    for (const c of INVALID_GUARDS) {
      it(`guard: ${c.case}`, async () => {
        const err = await refusal(c.obj, { ns });
        assert.match(err, c.message);
        const name = (c.obj.metadata as { name: string }).name;
        const got = await kubectl(['get', 'rolloutguard', name, '--ignore-not-found', '-o', 'name'], { ns });
        assert.equal(got.stdout.trim(), '', 'nothing was stored');
      });
    }

    for (const c of INVALID_POLICIES) {
      it(`policy: ${c.case}`, async () => {
        assert.match(await refusal(c.obj, { dryRun: true }), c.message);
      });
    }

    it('the valid edges are accepted: a 63-character guard name, targetRef.apiVersion apps/v1, a 40-character policy name, In with values', async () => {
      const g = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
        ns,
        input: JSON.stringify(rawGuard('a'.repeat(63), { targetRef: ref })),
      });
      assert.match(g.stdout, /created \(server dry run\)/);
      const withVersion = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
        ns,
        input: JSON.stringify(rawGuard('v', { targetRef: { apiVersion: 'apps/v1', ...ref } })),
      });
      assert.match(withVersion.stdout, /created \(server dry run\)/);
      const p = policy('p'.repeat(40), {
        namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] },
        selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
        guard: { suspectAfterSeconds: 30 },
      });
      const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(p) });
      assert.match(r.stdout, /created \(server dry run\)/);
    });

    it('targetRef.name is immutable on an existing guard; other fields still change', async () => {
      await apply(guard('immutable', ns, 'decoder'), ns);
      const err = await refusal(guard('immutable', ns, 'other-daemonset'), { ns });
      assert.match(err, /spec\.targetRef: Invalid value: targetRef\.name is immutable: create a new guard for another DaemonSet/);
      // Positive control: the rule refuses the retarget, not every update.
      await apply(guard('immutable', ns, 'decoder', { progressDeadlineSeconds: 900 }), ns);
      const g = await kubectlJson<GuardObj>(['get', 'rolloutguard', 'immutable'], { ns });
      assert.equal(g.spec.targetRef.name, 'decoder');
      assert.equal(g.spec.progressDeadlineSeconds, 900);
    });

    it('a guard cannot switch between targetRef and selector', async () => {
      await apply(guard('no-switch', ns, 'decoder'), ns);
      const err = await refusal(rawGuard('no-switch', { selector: { matchLabels: { tier: 'agent' } } }), { ns });
      assert.match(err, /a guard cannot switch between targetRef and selector: create a new guard/);
      await kubectl(['delete', 'rolloutguard', 'no-switch', '--wait=true'], { ns });
    });

    it('a target in another namespace cannot be expressed: targetRef.namespace is refused or pruned, never stored', async () => {
      const withNs = rawGuard('elsewhere', { targetRef: { kind: 'DaemonSet', name: 'decoder', namespace: 'kube-system' } });
      // kubectl's default (--validate=strict) asks the API server for strict field validation: refused.
      const err = await refusal(withNs, { ns });
      assert.match(err, /strict decoding error: unknown field "spec\.targetRef\.namespace"/);
      // Without field validation the schema prunes the unknown field: the guard targets its own namespace.
      await kubectl(['apply', '--validate=false', '-f', '-'], { ns, input: JSON.stringify(withNs) });
      const stored = await kubectlJson<GuardObj>(['get', 'rolloutguard', 'elsewhere'], { ns });
      assert.deepEqual(stored.spec.targetRef, { kind: 'DaemonSet', name: 'decoder' });
      // A patch adding it is a no-op with a warning.
      const patched = await kubectl(
        ['patch', 'rolloutguard', 'elsewhere', '--type=merge', '-p', '{"spec":{"targetRef":{"namespace":"kube-system"}}}'],
        { ns },
      );
      assert.match(patched.stderr, /unknown field "spec\.targetRef\.namespace"/);
      assert.match(patched.stdout, /patched \(no change\)/);
      const crd = await kubectlJson<{
        spec: {
          versions: Array<{
            schema: { openAPIV3Schema: { properties: { spec: { properties: { targetRef: { properties: Record<string, unknown> } } } } } };
          }>;
        };
      }>(['get', 'crd', 'rolloutguards.rolloutguard.dev']);
      // And the schema the server serves has no such field at all (apiVersion is apps/v1 or absent).
      assert.deepEqual(Object.keys(crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.targetRef.properties).sort(), [
        'apiVersion',
        'kind',
        'name',
      ]);
    });

    it('the defaults the CEL rules assume are the CRD defaults and the operator defaults', async () => {
      type Schema = { properties: Record<string, Schema>; default?: unknown; 'x-kubernetes-validations'?: Array<{ rule: string }> };
      const load = async (f: string): Promise<Schema> =>
        (
          parseYaml(await readFile(resolve(ROOT, 'config/crd', f), 'utf8')) as {
            spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
          }
        ).spec.versions[0]!.schema.openAPIV3Schema;
      const guardSpec = (await load('rolloutguards.yaml')).properties.spec!;
      assert.equal(guardSpec.properties.suspectAfterSeconds!.default, GUARD_DEFAULTS.suspectAfterSeconds);
      assert.equal(guardSpec.properties.progressDeadlineSeconds!.default, GUARD_DEFAULTS.progressDeadlineSeconds);
      const policyRule = (await load('rolloutguardpolicies.yaml')).properties.spec!.properties.guard!['x-kubernetes-validations']![0]!.rule;
      assert.ok(policyRule.includes(`self.suspectAfterSeconds : ${GUARD_DEFAULTS.suspectAfterSeconds})`), policyRule);
      assert.ok(policyRule.includes(`self.progressDeadlineSeconds : ${GUARD_DEFAULTS.progressDeadlineSeconds})`), policyRule);
    });
  });

  describe('handled by a running operator: nothing crashes, every case ends in a clear condition', () => {
    const CASES = [
      'ondelete',
      'history',
      'nohistory',
      'foreign',
      'huge',
      'guardFirst',
      'targetFirst',
      'both',
      'recreated',
      'stalledDeleted',
    ] as const;
    type Case = (typeof CASES)[number];
    /** Node pool per case; the lifecycle cases share one (each DaemonSet counts only its own pods). */
    const POOL_OF: Record<Case, 'ondelete' | 'history' | 'foreign' | 'huge' | 'life'> = {
      ondelete: 'ondelete',
      history: 'history',
      nohistory: 'life',
      foreign: 'foreign',
      huge: 'huge',
      guardFirst: 'life',
      targetFirst: 'life',
      both: 'life',
      recreated: 'life',
      stalledDeleted: 'life',
    };
    const POOL_SIZE = { ondelete: 3, history: 3, foreign: 3, huge: 30, life: 2 } as const;
    const ns = {} as Record<Case, string>;
    const pools = {} as Record<keyof typeof POOL_SIZE, NodePool>;
    const cleanups: Array<() => Promise<void>> = [];
    let op: OperatorProcess;

    const getGuard = (c: Case): Promise<GuardObj> => kubectlJson<GuardObj>(['get', 'rolloutguard', 'decoder'], { ns: ns[c] });

    async function waitGuard(c: Case, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 60_000): Promise<GuardObj> {
      let last: GuardObj | undefined;
      try {
        await waitFor(
          async () => {
            last = await getGuard(c);
            return pred(last);
          },
          { timeoutMs, describe: `${c}: ${what}` },
        );
      } catch (e) {
        throw new Error(
          `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n${op.logs.slice(-20).join('\n')}`,
        );
      }
      return last!;
    }

    async function events(c: Case, kind: string, name = 'decoder'): Promise<Array<{ reason: string; type: string; message?: string }>> {
      const list = await kubectlJson<{ items: Array<{ reason: string; type: string; message?: string }> }>(
        ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=${name}`],
        { ns: ns[c] },
      );
      return list.items;
    }

    async function templateGeneration(c: Case): Promise<string> {
      const ds = await kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns: ns[c] });
      return ds.metadata.annotations['deprecated.daemonset.template.generation'] ?? '';
    }

    /** A RollingUpdate DaemonSet `decoder` on the case's pool, rolled out, and a Healthy guard for it. */
    async function healthy(
      c: Case,
      spec: Record<string, unknown> = FAST,
      ds: Partial<Parameters<typeof decoderDaemonSet>[0]> = {},
    ): Promise<GuardObj> {
      await apply(decoderDaemonSet({ name: 'decoder', ns: ns[c], pool: pools[POOL_OF[c]].name, image: GOOD, ...ds }));
      await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=120s'], { ns: ns[c] });
      await apply(guard('decoder', ns[c], 'decoder', spec));
      return waitGuard(c, (g) => g.status?.state === 'Healthy' && cond(g, 'Ready')?.status === 'True', 'Healthy');
    }

    /** The operator's state gauge for the case's guard: gone once the operator has forgotten the guard. */
    async function stateSeries(c: Case): Promise<string[]> {
      const { body } = await op.get('/metrics');
      return body.split('\n').filter((l) => l.startsWith('rollout_guard_state{') && l.includes(`namespace="${ns[c]}"`));
    }

    async function gone(c: Case, ...objs: string[]): Promise<void> {
      await waitFor(async () => (await kubectl(['get', ...objs, '--ignore-not-found', '-o', 'name'], { ns: ns[c] })).stdout.trim() === '', {
        timeoutMs: 60_000,
        describe: `${objs.join(', ')} deleted`,
      });
    }

    before(async () => {
      await Promise.all(
        CASES.map(async (c) => {
          const n = await createNamespace(`bi-${c.toLowerCase()}`);
          ns[c] = n.name;
          cleanups.push(n.cleanup);
        }),
      );
      await Promise.all(
        (Object.keys(POOL_SIZE) as Array<keyof typeof POOL_SIZE>).map(async (p) => {
          pools[p] = await createNodePool(uniqueName(`bi-${p}`), POOL_SIZE[p]);
          cleanups.push(pools[p].cleanup);
        }),
      );
      // Policies off: this operator watches only our namespaces, and a policy controller here would write
      // the status of other suites' cluster-scoped policies from that partial view.
      op = await OperatorProcess.start({ namespaces: CASES.map((c) => ns[c]) });
    });

    after(async () => {
      if (op) await op.stop();
      await Promise.allSettled(cleanups.map((c) => c()));
    });

    describe('cases', { concurrency: true }, () => {
      it('target with updateStrategy OnDelete: Unknown, Ready=False OnDeleteStrategy, no rollout is ever timed', async () => {
        const c: Case = 'ondelete';
        const ds = decoderDaemonSet({ name: 'decoder', ns: ns[c], pool: pools.ondelete.name, image: GOOD }) as {
          spec: Record<string, unknown>;
        };
        ds.spec.updateStrategy = { type: 'OnDelete' };
        await apply(ds);
        // `kubectl rollout status` refuses OnDelete DaemonSets: wait on the columns instead.
        await waitFor(async () => (await daemonSetRow(ns[c], 'decoder')).ready === 3, {
          timeoutMs: 90_000,
          describe: 'OnDelete DaemonSet ready',
        });
        await apply(guard('decoder', ns[c], 'decoder', FAST));
        const g = await waitGuard(
          c,
          (x) => x.status?.state === 'Unknown' && cond(x, 'Ready')?.reason === 'OnDeleteStrategy',
          'Unknown/OnDeleteStrategy',
        );
        assert.equal(cond(g, 'Ready')?.status, 'False');
        assert.match(cond(g, 'Ready')!.message, /updateStrategy OnDelete: pods change only when deleted by hand/);
        assert.equal(cond(g, 'Stalled')?.status, 'Unknown');
        assert.equal(g.status?.desired, 3, 'the counters are still reported');
        // A broken template is not rolled by the controller under OnDelete, and the guard does not time it.
        await kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns: ns[c] });
        await holdsFor(
          async () => {
            const x = await getGuard(c);
            return x.status?.state === 'Unknown' && cond(x, 'Ready')?.reason === 'OnDeleteStrategy' && x.status.rollout === undefined;
          },
          { durationMs: 3 * FAST.progressDeadlineSeconds * 1000, describe: 'still Unknown/OnDeleteStrategy after a template change' },
        );
        assert.equal(
          (await events(c, 'RolloutGuard')).filter((e) => e.reason === 'OnDeleteStrategy').length,
          1,
          'one Warning, not one per pass',
        );
        // Switching to RollingUpdate makes it a guarded rollout again: the condition is live, not sticky.
        await kubectl(
          [
            'patch',
            'ds',
            'decoder',
            '--type=merge',
            '-p',
            JSON.stringify({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } } }),
          ],
          { ns: ns[c] },
        );
        // Under load the node may still be empty when the deadline passes (cause Unknown); the cause is
        // named once the new pod exists, so wait for the explained state.
        const s = await waitGuard(c, pullStalled, 'Stalled with ImagePullFailure after switching to RollingUpdate');
        assert.equal(s.status?.cause, 'ImagePullFailure');
        assert.equal(cond(s, 'Stalled')?.status, 'True');
      });

      it('the ControllerRevision to restore was deleted by hand before the stall: no undo, and the status says why', async () => {
        const c: Case = 'history';
        // A deadline long enough to prune the history between the template change and the stall.
        const h = await healthy(c, { suspectAfterSeconds: 3, progressDeadlineSeconds: 12, onStall: { action: 'Undo' } });
        const originalHash = h.status!.currentRevision!.hash;
        const genBefore = await templateGeneration(c);
        await kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns: ns[c] });
        let revisions: Revision[] = [];
        await waitFor(
          async () => {
            revisions = (await kubectlJson<{ items: Revision[] }>(['get', 'controllerrevisions'], { ns: ns[c] })).items;
            return revisions.length === 2;
          },
          { timeoutMs: 30_000, describe: 'the new ControllerRevision' },
        );
        const original = revisions.find((r) => r.metadata.labels?.['controller-revision-hash'] === originalHash);
        assert.ok(original, `the revision of ${originalHash} is in ${JSON.stringify(revisions.map((r) => r.metadata.name))}`);
        assert.notEqual((await getGuard(c)).status?.state, 'Stalled', 'premise: the history is pruned before the stall');
        await kubectl(['delete', 'controllerrevision', original.metadata.name], { ns: ns[c] });

        const g = await waitGuard(c, pullStalled, 'Stalled on the image pull');
        const why = `is no longer in the DaemonSet's history (ControllerRevision deleted)`;
        assert.ok(g.status?.message?.includes(`Undo not possible: revision 1 (${originalHash}) ${why}.`), g.status?.message);
        assert.ok(cond(g, 'Stalled')?.message.includes(why));
        assert.equal(cond(g, 'Stalled')?.status, 'True');
        assert.equal(g.status?.lastUndo, undefined, 'no undo was attempted');
        assert.equal(g.status?.undoPlan, undefined, 'there is nothing to restore');
        // Nothing is sent: the DaemonSet keeps the broken template, and the guard keeps saying why.
        await holdsFor(
          async () => (await templateGeneration(c)) === String(Number(genBefore) + 1) && (await getGuard(c)).status?.state === 'Stalled',
          {
            durationMs: 5_000,
            describe: 'no undo',
          },
        );
        const evs = await events(c, 'RolloutGuard');
        const skipped = evs.filter((e) => e.reason === 'UndoSkipped');
        assert.equal(skipped.length, 1, 'one UndoSkipped Event, not one per pass');
        assert.ok(skipped[0]!.message?.includes(why), skipped[0]!.message);
        assert.ok(!evs.some((e) => e.reason === 'UndoStarted'));
      });

      it('a DaemonSet broken from its first revision (no history to restore): Stalled, no undo, and the status says why', async () => {
        const c: Case = 'nohistory';
        // The DaemonSet controller observes the DaemonSet before the guard looks: with the case's 4 s
        // deadline, a controller slowed by a loaded machine would otherwise be the stall's rightful
        // cause (ControllerNotObserving, owner ControlPlane), and this case is about the revision.
        await apply(decoderDaemonSet({ name: 'decoder', ns: ns[c], pool: pools.life.name, image: BROKEN }));
        await waitFor(
          async () => {
            const ds = await kubectlJson<{ status?: { observedGeneration?: number } }>(['get', 'ds', 'decoder'], { ns: ns[c] });
            return ds.status?.observedGeneration === 1 ? true : undefined;
          },
          { timeoutMs: 60_000, describe: 'the DaemonSet controller observed the new DaemonSet' },
        );
        await apply(guard('decoder', ns[c], 'decoder', { ...FAST, onStall: { action: 'Undo' } }));
        const g = await waitGuard(c, pullStalled, 'Stalled on the image pull');
        assert.equal(g.status?.cause, 'ImagePullFailure');
        // Which sentence depends on whether the guard's first look at the DaemonSet already had a revision
        // recorded; both say there is nothing earlier to restore.
        assert.match(
          g.status?.message ?? '',
          /Undo not possible: (the template did not change: there is no earlier revision to restore|the revision this rollout started from is unknown)/,
        );
        assert.equal(g.status?.lastUndo, undefined);
        assert.equal(g.status?.undoPlan, undefined);
        assert.equal(cond(g, 'Stalled')?.status, 'True');
        // The refusal is stated: the RolledBack condition and status.undoSkipped say why there is no undo.
        assert.equal(cond(g, 'RolledBack')?.reason, 'UndoSkipped');
        assert.equal(g.status?.undoSkipped?.reason, 'NoEarlierRevision');
        await holdsFor(async () => (await templateGeneration(c)) === '1' && (await getGuard(c)).status?.state === 'Stalled', {
          durationMs: 5_000,
          describe: 'no undo',
        });
        const evs = await events(c, 'RolloutGuard');
        assert.equal(evs.filter((e) => e.reason === 'UndoSkipped').length, 1);
        assert.ok(!evs.some((e) => e.reason === 'UndoStarted'));
      });

      it("pods carrying the DaemonSet's labels but owned by something else are ignored", async () => {
        const c: Case = 'foreign';
        const n = ns[c];
        const pool = pools.foreign;
        const h = await healthy(c, { ...FAST, onStall: { action: 'Report', delaySeconds: 0 } });
        const hash = h.status!.currentRevision!.hash;
        const steady = {
          state: 'Healthy',
          desired: 3,
          ready: 3,
          generations: [{ revision: 1, hash, images: [GOOD], nodes: 3, ready: 3 }],
          blockedNodeCount: 0,
          emptyNodeCount: 0,
        };
        const pick = (g: GuardObj): unknown => ({
          state: g.status?.state,
          desired: g.status?.desired,
          ready: g.status?.ready,
          generations: g.status?.generations,
          blockedNodeCount: g.status?.blockedNodeCount,
          emptyNodeCount: g.status?.emptyNodeCount,
        });
        assert.deepEqual(pick(h), steady);

        await kubectl(['create', 'configmap', 'foreign-owner'], { ns: n });
        const owner = await kubectlJson<{ metadata: { uid: string } }>(['get', 'configmap', 'foreign-owner'], { ns: n });
        const ownerRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'foreign-owner', uid: owner.metadata.uid, controller: true };
        const pod = (name: string, node: string, labels: Record<string, string>, owned: boolean): Record<string, unknown> => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: n, labels, ...(owned ? { ownerReferences: [ownerRef] } : {}) },
          spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.local/lookalike:1' }] },
        });
        // (a) Same labels and revision hash, a foreign controller: a Ready pod the split would count.
        await apply(pod('foreign-owned', pool.nodes[0]!, { app: 'decoder', 'controller-revision-hash': hash }, true));
        // (b) Another workload whose pods carry the DaemonSet's selector labels (a label collision).
        await apply({
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: { name: 'lookalike', namespace: n },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'decoder', lookalike: 'true' } },
            template: {
              metadata: { labels: { app: 'decoder', lookalike: 'true', 'controller-revision-hash': 'lookalike' } },
              spec: {
                nodeSelector: { [POOL_LABEL]: pool.name },
                terminationGracePeriodSeconds: 1,
                containers: [{ name: 'c', image: 'registry.local/lookalike:1' }],
              },
            },
          },
        });
        // (c) A bare pod with the labels: the DaemonSet controller adopts it and, the node already having a
        // daemon pod, deletes it (Kubernetes behaviour, asserted so the test notices if it changes).
        await apply(pod('bare', pool.nodes[1]!, { app: 'decoder', 'controller-revision-hash': hash }, false));
        await waitFor(
          async () => {
            const pods = await kubectlJson<{
              items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }>;
            }>(['get', 'pods', '-l', 'app=decoder'], { ns: n });
            const ready = (p: (typeof pods.items)[number]): boolean =>
              p.status.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
            const foreign = pods.items.filter((p) => p.metadata.name === 'foreign-owned' || p.metadata.name.startsWith('lookalike-'));
            return foreign.length === 3 && foreign.every(ready) && !pods.items.some((p) => p.metadata.name === 'bare');
          },
          { timeoutMs: 60_000, describe: 'foreign pods Ready, the bare pod removed by the DaemonSet controller' },
        );
        // The controller's Event is written asynchronously, after the deletion itself.
        await waitFor(
          async () => (await events(c, 'DaemonSet')).some((e) => e.reason === 'SuccessfulDelete' && e.message === 'Deleted pod: bare'),
          {
            timeoutMs: 15_000,
            describe: 'the DaemonSet controller deleted the adopted bare pod',
          },
        );

        // Foreign pods enqueue no guard (they map to no DaemonSet), so force a pass that sees them in the
        // cache: a spec change, confirmed by observedGeneration.
        await kubectl(['patch', 'rolloutguard', 'decoder', '--type=merge', '-p', '{"spec":{"onStall":{"delaySeconds":1}}}'], { ns: n });
        const seen = await waitGuard(
          c,
          (x) => x.status?.observedGeneration === x.metadata.generation,
          'a pass after the foreign pods appeared',
        );
        assert.deepEqual(pick(seen), steady, 'generations and counts unaffected');

        // In a stall: a foreign Ready pod with the *new* hash on the blocked node must not unblock it.
        await kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns: n });
        const stalled = await waitGuard(c, (x) => x.status?.state === 'Stalled' && x.status.blockedNodeCount === 1, 'Stalled on one node');
        const blocked = stalled.status!.blockedNodes![0]!.node;
        const newHash = stalled.status!.currentRevision!.hash;
        await apply(pod('foreign-on-target', blocked, { app: 'decoder', 'controller-revision-hash': newHash }, true));
        await kubectl(['wait', '--for=condition=Ready', 'pod/foreign-on-target', '--timeout=60s'], { ns: n });
        await kubectl(['patch', 'rolloutguard', 'decoder', '--type=merge', '-p', '{"spec":{"onStall":{"delaySeconds":2}}}'], { ns: n });
        const after = await waitGuard(
          c,
          (x) => x.status?.observedGeneration === x.metadata.generation,
          'a pass after the look-alike appeared',
        );
        assert.equal(after.status?.state, 'Stalled');
        assert.equal(after.status?.blockedNodeCount, 1);
        assert.deepEqual(
          after.status?.blockedNodes?.map((b) => b.node),
          [blocked],
        );
        const gens = after.status?.generations ?? [];
        assert.equal(
          gens.reduce((s, x) => s + x.nodes, 0),
          3,
          JSON.stringify(gens),
        );
        assert.deepEqual(
          gens.find((x) => x.hash === newHash),
          { revision: 2, hash: newHash, images: [BROKEN], nodes: 1, ready: 0 },
        );
      });

      it('a huge DaemonSet (30 nodes, 25 blocked): lists capped at 20, counts exact, the object well-formed', async () => {
        const c: Case = 'huge';
        await healthy(c, FAST, { maxUnavailable: 25 });
        await kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns: ns[c] });
        const g = await waitGuard(
          c,
          (x) =>
            x.status?.state === 'Stalled' &&
            x.status.blockedNodeCount === 25 &&
            x.status.emptyNodeCount === 0 &&
            (x.status.blockedNodes ?? []).every((b) => /ImagePullBackOff|ErrImagePull/.test(b.reason)),
          'Stalled with 25 nodes blocked on the image pull',
          180_000,
        );
        const s = g.status!;
        assert.equal(s.desired, 30);
        assert.equal(s.cause, 'ImagePullFailure');
        assert.equal(s.blockedNodes?.length, STATUS_LIST_CAP);
        const names = s.blockedNodes.map((b) => b.node);
        assert.deepEqual(names, [...names].sort(), 'sorted, so the capped list is stable between passes');
        assert.equal(new Set(names).size, names.length, 'no duplicates');
        assert.ok(names.every((x) => pools.huge.nodes.includes(x)));
        assert.ok(
          s.blockedNodes.every((b) => /ImagePullBackOff|ErrImagePull/.test(b.reason)),
          JSON.stringify(s.blockedNodes?.slice(0, 2)),
        );
        assert.deepEqual(
          s.generations?.map((x) => ({ revision: x.revision, nodes: x.nodes, ready: x.ready })),
          [
            { revision: 2, nodes: 25, ready: 0 },
            { revision: 1, nodes: 5, ready: 5 },
          ],
        );
        assert.equal(s.undoPlan?.nodes, 25, 'the undo plan counts every node it would change, not the capped list');
        // The message names three nodes and counts the rest.
        assert.match(s.message ?? '', /and 22 more/);
        assert.match(s.message ?? '', /DESIRED 30/);
        assert.ok((s.message ?? '').length <= 2000);
        // Well-formed: stored (so it passed the CRD schema: maxItems, enums), small, and printable.
        const { stdout } = await kubectl(['get', 'rolloutguard', 'decoder', '-o', 'json'], { ns: ns[c] });
        assert.ok(stdout.length < 32 * 1024, `status stays small (${stdout.length} bytes)`);
        const wide = await kubectl(['get', 'rolloutguard', 'decoder', '-o', 'wide', '--no-headers'], { ns: ns[c] });
        assert.match(wide.stdout, /\bStalled\s+30\s+\d+\s+\d+\s+ImagePullFailure\s+Revision\s+25\b/);
      });

      it('guard deleted first, then its target: the operator forgets the guard', async () => {
        const c: Case = 'guardFirst';
        await healthy(c);
        assert.ok((await stateSeries(c)).length > 0, 'premise: the guard is reported');
        await kubectl(['delete', 'rolloutguard', 'decoder', '--wait=true'], { ns: ns[c] });
        await waitFor(async () => (await stateSeries(c)).length === 0, { timeoutMs: 30_000, describe: 'state series dropped' });
        await kubectl(['delete', 'ds', 'decoder', '--wait=true'], { ns: ns[c] });
        await gone(c, 'ds/decoder');
        assert.deepEqual(await stateSeries(c), []);
      });

      it('target deleted first: Unknown with Ready=False TargetNotFound; then the guard', async () => {
        const c: Case = 'targetFirst';
        await healthy(c);
        await kubectl(['delete', 'ds', 'decoder', '--wait=true'], { ns: ns[c] });
        const g = await waitGuard(
          c,
          (x) => x.status?.state === 'Unknown' && cond(x, 'Ready')?.reason === 'TargetNotFound',
          'Unknown/TargetNotFound',
        );
        assert.equal(cond(g, 'Ready')?.status, 'False');
        assert.equal(cond(g, 'Ready')?.message, 'DaemonSet decoder not found in this namespace; waiting for it to be created');
        assert.equal(cond(g, 'Stalled')?.status, 'Unknown');
        assert.equal(g.status?.desired, 0);
        assert.deepEqual(g.status?.generations, []);
        assert.equal(g.status?.currentRevision, undefined, 'nothing of the old object is kept');
        await waitFor(async () => (await events(c, 'RolloutGuard')).some((e) => e.reason === 'TargetNotFound' && e.type === 'Warning'), {
          timeoutMs: 15_000,
          describe: 'TargetNotFound Event',
        });
        await kubectl(['delete', 'rolloutguard', 'decoder', '--wait=true'], { ns: ns[c] });
        await waitFor(async () => (await stateSeries(c)).length === 0, { timeoutMs: 30_000, describe: 'state series dropped' });
      });

      it('guard and target deleted at once', async () => {
        const c: Case = 'both';
        await healthy(c);
        await kubectl(['delete', 'rolloutguard/decoder', 'ds/decoder', '--wait=false'], { ns: ns[c] });
        await gone(c, 'rolloutguard/decoder', 'ds/decoder');
        await waitFor(async () => (await stateSeries(c)).length === 0, { timeoutMs: 30_000, describe: 'state series dropped' });
      });

      it('target deleted and recreated: TargetNotFound, then guarded again as a new object', async () => {
        const c: Case = 'recreated';
        const first = await healthy(c);
        const oldHash = first.status!.currentRevision!.hash;
        await kubectl(['delete', 'ds', 'decoder', '--wait=true'], { ns: ns[c] });
        await waitGuard(c, (x) => cond(x, 'Ready')?.reason === 'TargetNotFound', 'TargetNotFound');
        await apply(decoderDaemonSet({ name: 'decoder', ns: ns[c], pool: pools.life.name, image: 'registry.local/decoder:3' }));
        await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=120s'], { ns: ns[c] });
        const g = await waitGuard(
          c,
          (x) => x.status?.state === 'Healthy' && cond(x, 'Ready')?.reason === 'TargetHealthy',
          'Healthy on the new DaemonSet',
        );
        assert.notEqual(g.status?.currentRevision?.hash, oldHash);
        assert.equal(g.status?.currentRevision?.revision, 1, "the new object's history starts over");
        assert.deepEqual(
          g.status?.generations?.map((x) => ({ images: x.images, nodes: x.nodes, ready: x.ready })),
          [{ images: ['registry.local/decoder:3'], nodes: 2, ready: 2 }],
        );
        await waitFor(async () => (await events(c, 'RolloutGuard')).some((e) => e.reason === 'TargetFound'), {
          timeoutMs: 15_000,
          describe: 'TargetFound Event',
        });
      });

      it('target deleted while Stalled with an undo scheduled, then recreated: the undo is dropped, never sent', async () => {
        const c: Case = 'stalledDeleted';
        await healthy(c, { ...FAST, onStall: { action: 'Undo', delaySeconds: 600 } });
        await kubectl(['set', 'image', 'ds/decoder', `decoder=${BROKEN}`], { ns: ns[c] });
        const stalled = await waitGuard(c, pullStalled, 'Stalled on the image pull');
        assert.match(stalled.status?.message ?? '', /Undo to revision 1 \(\w+\) in \d+m/);
        await kubectl(['delete', 'ds', 'decoder', '--wait=true'], { ns: ns[c] });
        const g = await waitGuard(
          c,
          (x) => x.status?.state === 'Unknown' && cond(x, 'Ready')?.reason === 'TargetNotFound',
          'Unknown/TargetNotFound',
        );
        assert.equal(g.status?.undoPlan, undefined);
        assert.equal(g.status?.rollout, undefined);
        assert.equal(g.status?.lastUndo, undefined);
        assert.equal(cond(g, 'Stalled')?.status, 'Unknown');
        await apply(decoderDaemonSet({ name: 'decoder', ns: ns[c], pool: pools.life.name, image: GOOD }));
        await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=120s'], { ns: ns[c] });
        const back = await waitGuard(c, (x) => x.status?.state === 'Healthy', 'Healthy on the recreated DaemonSet');
        assert.equal(back.status?.lastUndo, undefined);
        assert.equal(cond(back, 'Stalled')?.status, 'False');
        assert.ok(!(await events(c, 'RolloutGuard')).some((e) => e.reason === 'UndoStarted'));
      });
    });

    it('the operator survived every case: still ready, no error and no unhandled rejection in its logs', async () => {
      assert.equal((await op.get('/readyz')).status, 200);
      assert.equal((await op.get('/healthz')).status, 200);
      const logs = op.jsonLogs();
      assert.ok(logs.length > 0);
      assert.deepEqual(
        op.logs.filter((l) => /unhandled|uncaught/i.test(l)),
        [],
      );
      assert.deepEqual(
        logs.filter((l) => l.level === 'error' || l.level === 'fatal'),
        [],
      );
      // A failed pass is retried with backoff; one caused by a bug (TypeError …) would fail forever.
      assert.deepEqual(
        logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('reconcile failed')),
        [],
      );
    });
  });
});
