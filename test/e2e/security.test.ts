/**
 * End to end: least privilege and Pod Security, proven against the real API server; the image and the
 * Deployment's hardening, checked statically (there is no container runtime here to build the image).
 *
 * RBAC: the objects `kubectl kustomize config/rbac` (and `config/report-only`) render are installed
 * unchanged except for their names: cluster-scoped ones get a unique suffix and namespaced ones move to a
 * unique namespace. Other suites run concurrently against the same cluster and may install or revoke the
 * real `rollout-guard` bindings; our copies cannot race with them, and are deleted afterwards. Then
 * `kubectl auth can-i --as=system:serviceaccount:<ns>:rollout-guard` asks the API server's own authorizer
 * what the operator may and may not do.
 *
 * Pod Security: the Deployment from `deploy/` goes into a unique namespace carrying the labels of
 * deploy/namespace.yaml (enforce=restricted); the real PodSecurity admission plugin decides. A copy of
 * the pod without runAsNonRoot and seccompProfile must be refused there, so the test would fail if
 * admission were off.
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { DEFAULTS } from '../../src/runtime/config.js';
import { POOL_LABEL, createNodePool, ensureCluster, kubectl, kubectlJson, uniqueName, waitFor, type NodePool } from '../support/cluster.js';
import { ROOT, apply } from '../support/operator.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML */
type Obj = Record<string, any>;

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
/** The namespace the manifests hard-code; our copies move out of it. */
const INSTALL_NS = 'rollout-guard-system';
/** Label on every object this suite creates outside its namespaces, for cleanup. */
const TEST_LABEL = 'rollout-guard.dev/security-test';

async function kustomize(dir: string): Promise<Obj[]> {
  const { stdout } = await kubectl(['kustomize', resolve(ROOT, dir)]);
  return parseAllDocuments(stdout).map((d) => d.toJS() as Obj).filter(Boolean);
}

async function yamlDocs(file: string): Promise<Obj[]> {
  return parseAllDocuments(await readFile(resolve(ROOT, file), 'utf8')).map((d) => d.toJS() as Obj).filter(Boolean);
}

/**
 * The RBAC objects of a rendering, renamed (only) so that they cannot collide: namespaced objects and
 * ServiceAccount subjects move to `ns`, cluster-scoped names and ClusterRole references get `suffix`.
 */
function relocate(docs: readonly Obj[], ns: string, suffix: string): Obj[] {
  return docs
    .filter((d) => RBAC_KINDS.has(d.kind as string))
    .map((d) => {
      const o = structuredClone(d);
      o.metadata.labels = { ...o.metadata.labels, [TEST_LABEL]: suffix };
      if (o.metadata.namespace !== undefined) {
        assert.equal(o.metadata.namespace, INSTALL_NS, `${o.kind}/${o.metadata.name} lives in ${INSTALL_NS}`);
        o.metadata.namespace = ns;
      }
      if ((o.kind as string).startsWith('Cluster')) o.metadata.name = `${o.metadata.name}-${suffix}`;
      if (o.roleRef?.kind === 'ClusterRole') o.roleRef.name = `${o.roleRef.name}-${suffix}`;
      for (const s of (o.subjects ?? []) as Obj[]) {
        if (s.kind === 'ServiceAccount') {
          assert.equal(s.namespace, INSTALL_NS);
          s.namespace = ns;
        }
      }
      return o;
    });
}

/** `kubectl auth can-i` as the operator's ServiceAccount: true for "yes", false for "no". */
async function canI(sa: string, args: readonly string[]): Promise<boolean> {
  const res = await kubectl(['auth', 'can-i', ...args, `--as=${sa}`], { allowFail: true });
  const answer = res.stdout.trim();
  assert.ok(answer === 'yes' || answer === 'no', `can-i ${args.join(' ')}: ${answer} ${res.stderr}`);
  return answer === 'yes';
}

/** What the operator needs (conventions §4), as `kubectl auth can-i` arguments. `-A`: in every namespace. */
const ALLOWED: ReadonlyArray<readonly string[]> = [
  ['get', 'daemonsets.apps', '-A'],
  ['list', 'daemonsets.apps', '-A'],
  ['watch', 'daemonsets.apps', '-A'],
  ['list', 'pods', '-A'],
  ['watch', 'pods', '-A'],
  ['list', 'nodes'],
  ['watch', 'nodes'],
  ['list', 'controllerrevisions.apps', '-A'],
  ['watch', 'controllerrevisions.apps', '-A'],
  ['get', 'controllerrevisions.apps', '-n', 'default'],
  ['list', 'rolloutguards.rolloutguard.dev', '-A'],
  ['watch', 'rolloutguards.rolloutguard.dev', '-A'],
  ['list', 'rolloutguardpolicies.rolloutguard.dev'],
  ['watch', 'rolloutguardpolicies.rolloutguard.dev'],
  ['list', 'namespaces'],
  ['watch', 'namespaces'],
  ['patch', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', 'default'],
  ['patch', 'rolloutguardpolicies.rolloutguard.dev', '--subresource=status'],
  // Generated guards of RolloutGuardPolicies.
  ['create', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['patch', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['delete', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['create', 'events.events.k8s.io', '-n', 'default'],
  ['patch', 'events.events.k8s.io', '-n', 'default'],
  // The undo (rollout-guard-undo binding).
  ['patch', 'daemonsets.apps', '-n', 'default'],
];

/** What it must never be able to do. */
const DENIED: ReadonlyArray<readonly string[]> = [
  ['*', '*', '-A'],
  ['*', 'daemonsets.apps', '-n', 'default'],
  ['get', '*', '-A'],
  ['get', 'secrets', '-n', 'default'],
  ['list', 'secrets', '-A'],
  ['watch', 'secrets', '-A'],
  ['get', 'configmaps', '-n', 'default'],
  ['list', 'configmaps', '-A'],
  ['create', 'pods', '-n', 'default'],
  ['update', 'pods', '-n', 'default'],
  ['delete', 'pods', '-n', 'default'],
  ['deletecollection', 'pods', '-n', 'default'],
  ['create', 'pods', '--subresource=exec', '-n', 'default'],
  ['create', 'pods', '--subresource=eviction', '-n', 'default'],
  ['create', 'daemonsets.apps', '-n', 'default'],
  ['update', 'daemonsets.apps', '-n', 'default'],
  ['delete', 'daemonsets.apps', '-n', 'default'],
  ['patch', 'daemonsets.apps', '--subresource=status', '-n', 'default'],
  ['create', 'controllerrevisions.apps', '-n', 'default'],
  ['delete', 'controllerrevisions.apps', '-n', 'default'],
  ['patch', 'nodes'],
  ['update', 'nodes'],
  ['delete', 'nodes'],
  ['patch', 'namespaces'],
  ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
  ['create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'default'],
  ['create', 'clusterroles.rbac.authorization.k8s.io'],
  ['escalate', 'clusterroles.rbac.authorization.k8s.io'],
  ['bind', 'clusterroles.rbac.authorization.k8s.io'],
  ['impersonate', 'serviceaccounts', '-A'],
  ['impersonate', 'users'],
  ['create', 'serviceaccounts', '--subresource=token', '-n', 'default'],
  // Status is written by merge patch only; spec edits of guards by patch only.
  ['update', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', 'default'],
  ['update', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['create', 'rolloutguardpolicies.rolloutguard.dev'],
  ['delete', 'rolloutguardpolicies.rolloutguard.dev'],
  // Events go through events.k8s.io only.
  ['create', 'events', '-n', 'default'],
  ['delete', 'events.events.k8s.io', '-n', 'default'],
  // Leader election only in its own namespace.
  ['update', 'leases.coordination.k8s.io', '-n', 'default'],
  ['update', 'leases.coordination.k8s.io', '-n', 'kube-system'],
  ['create', 'leases.coordination.k8s.io', '-n', 'kube-node-lease'],
  ['update', 'leases.coordination.k8s.io', '-n', INSTALL_NS],
  ['delete', 'leases.coordination.k8s.io', '-A'],
];

describe('security', () => {
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    await ensureCluster();
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  describe('RBAC: config/rbac installed into the API server and checked with kubectl auth can-i', { concurrency: 8 }, () => {
    const suffix = uniqueName('sec').replace(/^sec-/, 'sec');
    let full: Obj[];
    let reportOnly: Obj[];
    let saFull: string;
    let saReport: string;
    let nsFull: string;

    before(async () => {
      full = await kustomize('config/rbac');
      reportOnly = (await kustomize('config/report-only')).filter((d) => RBAC_KINDS.has(d.kind as string));
      nsFull = uniqueName('sec-rbac');
      const nsReport = uniqueName('sec-rbac-ro');
      cleanups.push(async () => {
        await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${suffix}`, '--ignore-not-found']);
        await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${suffix}-ro`, '--ignore-not-found']);
        await kubectl(['delete', 'namespace', nsFull, nsReport, '--ignore-not-found', '--wait=false']);
      });
      await kubectl(['create', 'namespace', nsFull]);
      await kubectl(['create', 'namespace', nsReport]);
      await apply({ apiVersion: 'v1', kind: 'List', items: relocate(full, nsFull, suffix) });
      await apply({ apiVersion: 'v1', kind: 'List', items: relocate(reportOnly, nsReport, `${suffix}-ro`) });
      saFull = `system:serviceaccount:${nsFull}:rollout-guard`;
      saReport = `system:serviceaccount:${nsReport}:rollout-guard`;
      // RBAC changes reach the authorizer through its informers: wait until the bindings are in effect.
      await waitFor(async () => (await canI(saFull, ['patch', 'daemonsets.apps', '-n', 'default'])) && (await canI(saReport, ['list', 'pods', '-A'])), {
        timeoutMs: 30_000,
        describe: 'RBAC copies in effect',
      });
    });

    it('statically: no rule in config/rbac uses *, escalate, bind or impersonate, or touches secrets or configmaps', async () => {
      const files = (await readdir(resolve(ROOT, 'config/rbac'))).filter((f) => f.endsWith('.yaml'));
      const rules: Array<{ where: string; rule: Rule }> = [];
      for (const f of files) {
        for (const d of await yamlDocs(`config/rbac/${f}`)) {
          assert.equal(d.aggregationRule, undefined, `${f}: an aggregated ClusterRole grows with other roles`);
          for (const r of (d.rules ?? []) as Rule[]) rules.push({ where: `${f} ${d.kind}/${d.metadata?.name}`, rule: r });
        }
      }
      assert.ok(rules.length >= 8, `found the rules (${rules.length})`);
      for (const { where, rule } of rules) {
        const all = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs, ...(rule.resourceNames ?? []), ...(rule.nonResourceURLs ?? [])];
        assert.ok(!all.some((x) => x.includes('*')), `${where}: wildcard in ${JSON.stringify(rule)}`);
        for (const v of ['escalate', 'bind', 'impersonate']) assert.ok(!rule.verbs.includes(v), `${where}: ${v}`);
        for (const res of ['secrets', 'configmaps']) assert.ok(!(rule.resources ?? []).includes(res), `${where}: ${res}`);
        assert.equal(rule.nonResourceURLs, undefined, `${where}: non-resource URLs`);
      }
    });

    it('statically: least privilege, as properties of the grant rather than a snapshot of it', () => {
      const grants: Array<{ role: string; kind: string; ns?: string; group: string; resource: string; verb: string }> = [];
      for (const d of full) {
        for (const r of (d.rules ?? []) as Rule[]) {
          for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs) grants.push({ role: `${d.kind}/${d.metadata.name}`, kind: d.kind as string, ns: d.metadata.namespace, group: g || 'core', resource: res, verb: v });
        }
      }
      const WRITE = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
      const writes = grants.filter((g) => WRITE.has(g.verb));
      const reads = grants.filter((g) => !WRITE.has(g.verb));
      const where = (g: (typeof grants)[number]): string => `${g.role} ${g.verb} ${g.group}/${g.resource}`;

      // 1. Only the verbs a reader needs: get, list, watch. No proxy, no exec, no port-forward.
      for (const g of reads) assert.ok(['get', 'list', 'watch'].includes(g.verb), where(g));
      // 2. Nothing of someone else's is written, except the one DaemonSet patch of an undo, bound apart.
      for (const g of writes) {
        const ours = g.group === 'rolloutguard.dev';
        const events = g.group === 'events.k8s.io' && g.resource === 'events' && (g.verb === 'create' || g.verb === 'patch');
        const lease = g.group === 'coordination.k8s.io' && g.resource === 'leases';
        const undo = g.group === 'apps' && g.resource === 'daemonsets' && g.verb === 'patch' && g.role === 'ClusterRole/rollout-guard-undo';
        assert.ok(ours || events || lease || undo, `a write outside our own objects, Events, the Lease and the undo: ${where(g)}`);
      }
      // 3. The undo role grants exactly one thing, so a report-only install drops it whole.
      assert.deepEqual(grants.filter((g) => g.role === 'ClusterRole/rollout-guard-undo').map(where), ['ClusterRole/rollout-guard-undo patch apps/daemonsets']);
      // 4. Of our own objects, only status is patched, and guards are the only thing ever deleted.
      for (const g of writes.filter((x) => x.group === 'rolloutguard.dev')) {
        assert.ok(g.resource.endsWith('/status') ? g.verb === 'patch' : g.resource === 'rolloutguards' && ['create', 'patch', 'delete'].includes(g.verb), where(g));
      }
      assert.deepEqual(writes.filter((g) => g.verb === 'delete').map((g) => `${g.group}/${g.resource}`), ['rolloutguard.dev/rolloutguards']);
      assert.ok(!grants.some((g) => g.verb === 'deletecollection'), 'no deletecollection');
      // 5. Leases only in a namespaced Role (the operator's namespace), and never deleted.
      for (const g of grants.filter((x) => x.resource === 'leases')) {
        assert.equal(g.kind, 'Role', where(g));
        assert.equal(g.ns, INSTALL_NS, where(g));
        assert.ok(g.verb !== 'delete', where(g));
      }
      // 6. Pods and nodes are read, never written: no eviction, no deletion, no binding.
      for (const g of grants.filter((x) => ['pods', 'nodes', 'pods/eviction', 'pods/exec', 'bindings'].includes(x.resource))) assert.ok(!WRITE.has(g.verb), where(g));
      // 7. Core Events are only read (the Warnings that explain a node); ours go through events.k8s.io.
      for (const g of grants.filter((x) => x.group === 'core' && x.resource === 'events')) assert.ok(!WRITE.has(g.verb), where(g));
    });

    it('statically: config/report-only is the full install minus the undo binding, nothing else', async () => {
      const key = (d: Obj): string => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
      const fullRbac = (await kustomize('deploy')).filter((d) => RBAC_KINDS.has(d.kind as string));
      const missing = fullRbac.filter((d) => !reportOnly.some((r) => key(r) === key(d))).map(key);
      assert.deepEqual(missing, ['ClusterRoleBinding//rollout-guard-undo']);
      for (const r of reportOnly) assert.deepEqual(r, fullRbac.find((d) => key(d) === key(r)), `${key(r)} unchanged`);
      // The undo ClusterRole itself may stay: unbound, it grants nothing.
    });

    for (const args of ALLOWED) {
      it(`can ${args.join(' ')}`, async () => {
        assert.equal(await canI(saFull, args), true);
      });
    }

    for (const args of DENIED) {
      it(`cannot ${args.join(' ')}`, async () => {
        assert.equal(await canI(saFull, args), false);
      });
    }

    it('leader election works in its own namespace only', async () => {
      for (const v of ['get', 'create', 'update']) assert.equal(await canI(saFull, [v, 'leases.coordination.k8s.io', '-n', nsFull]), true, v);
      assert.equal(await canI(saFull, ['delete', 'leases.coordination.k8s.io', '-n', nsFull]), false, 'delete');
    });

    it('report-only install: cannot patch DaemonSets, and can still do everything else it needs', async () => {
      assert.equal(await canI(saReport, ['patch', 'daemonsets.apps', '-n', 'default']), false);
      assert.equal(await canI(saReport, ['patch', 'daemonsets.apps', '-A']), false);
      for (const args of ALLOWED.filter((a) => !(a[0] === 'patch' && a[1] === 'daemonsets.apps'))) {
        assert.equal(await canI(saReport, args), true, args.join(' '));
      }
      for (const args of DENIED) assert.equal(await canI(saReport, args), false, args.join(' '));
    });
  });

  describe('Pod Security: the deploy/ Deployment under enforce=restricted', () => {
    let ns: string;
    let pool: NodePool;
    let deployment: Obj;
    let nsLabels: Record<string, string>;

    before(async () => {
      const rendered = await kustomize('deploy');
      const namespace = rendered.find((d) => d.kind === 'Namespace');
      deployment = rendered.find((d) => d.kind === 'Deployment')!;
      assert.ok(namespace && deployment);
      nsLabels = namespace.metadata.labels as Record<string, string>;
      ns = uniqueName('sec-psa');
      // A pool of our own: the pods must not land on (and use up) other suites' nodes. (Two nodes: with one
      // name, `kubectl get nodes NAME -o json` returns a Node, not a List, and waitForNodesReady never sees it.)
      pool = await createNodePool(uniqueName('sec-psa'), 2);
      cleanups.push(pool.cleanup);
      cleanups.push(async () => {
        await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=60s']);
      });
      await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: nsLabels } });
      const sa = rendered.find((d) => d.kind === 'ServiceAccount')!;
      await apply({ ...sa, metadata: { ...sa.metadata, namespace: ns } });
    });

    it('deploy/namespace.yaml enforces, warns and audits the restricted profile', () => {
      assert.equal(nsLabels['pod-security.kubernetes.io/enforce'], 'restricted');
      assert.equal(nsLabels['pod-security.kubernetes.io/warn'], 'restricted');
      assert.equal(nsLabels['pod-security.kubernetes.io/audit'], 'restricted');
    });

    it("the Deployment is admitted without a warning and its pods are created, not refused", async () => {
      const d = structuredClone(deployment);
      d.metadata.namespace = ns;
      // Scheduling only; nodeSelector is not part of any Pod Security profile.
      d.spec.template.spec.nodeSelector = { [POOL_LABEL]: pool.name };
      const res = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(d) });
      // warn=restricted makes the API server check the pod template of a workload at apply time.
      assert.doesNotMatch(res.stderr, /PodSecurity/, res.stderr);
      const replicas = d.spec.replicas as number;
      await waitFor(async () => {
        const pods = await kubectlJson<{ items: unknown[] }>(['get', 'pods', '-l', 'app.kubernetes.io/name=rollout-guard'], { ns });
        return pods.items.length === replicas;
      }, { timeoutMs: 60_000, describe: `${replicas} pods created` });
      const evs = await kubectlJson<{ items: Array<{ reason: string; message: string }> }>(['get', 'events', '--field-selector=involvedObject.kind=ReplicaSet'], { ns });
      assert.deepEqual(evs.items.filter((e) => e.reason === 'FailedCreate').map((e) => e.message), []);
      assert.ok(evs.items.some((e) => e.reason === 'SuccessfulCreate'));
    });

    it('negative control: the same pod without runAsNonRoot and seccompProfile is refused in that namespace', async () => {
      const spec = structuredClone(deployment.spec.template.spec) as Obj;
      delete spec.securityContext.runAsNonRoot;
      delete spec.securityContext.seccompProfile;
      spec.nodeSelector = { [POOL_LABEL]: pool.name };
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'insecure', namespace: ns, labels: { app: 'insecure' } }, spec };
      const res = await kubectl(['create', '-f', '-'], { input: JSON.stringify(pod), allowFail: true });
      assert.notEqual(res.code, 0, 'admitted: PodSecurity admission is not enforcing');
      assert.match(res.stderr, /violates PodSecurity "restricted:latest"/);
      assert.match(res.stderr, /runAsNonRoot != true/);
      assert.match(res.stderr, /seccompProfile/);
      // And as a Deployment: the warning at apply time, then FailedCreate on its ReplicaSet, no pods. This is
      // what the positive test above would have seen had the real Deployment violated the profile.
      const d = structuredClone(deployment);
      d.metadata = { name: 'insecure', namespace: ns };
      d.spec.selector = { matchLabels: { app: 'insecure' } };
      d.spec.template.metadata.labels = { app: 'insecure' };
      d.spec.template.spec = spec;
      const applied = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(d) });
      assert.match(applied.stderr, /would violate PodSecurity "restricted:latest"/);
      await waitFor(async () => {
        const evs = await kubectlJson<{ items: Array<{ reason: string; message: string }> }>(['get', 'events', '--field-selector=involvedObject.kind=ReplicaSet,reason=FailedCreate'], { ns });
        return evs.items.some((e) => e.message.includes('violates PodSecurity'));
      }, { timeoutMs: 60_000, describe: 'FailedCreate: violates PodSecurity' });
      const pods = await kubectlJson<{ items: unknown[] }>(['get', 'pods', '-l', 'app=insecure'], { ns });
      assert.equal(pods.items.length, 0);
    });
  });

  describe('image and Deployment hardening (static: no container runtime here to build the image)', () => {
    let stages: Array<{ from: string; name?: string; lines: string[] }>;
    let dep: Obj;

    before(async () => {
      // Instructions with their continuation lines joined, comments dropped, grouped by stage.
      const text = (await readFile(resolve(ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
      stages = [];
      for (const raw of text.split('\n')) {
        const line = raw.trim();
        if (!line || line.startsWith('#')) continue;
        const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
        if (from) stages.push({ from: from[1]!, ...(from[2] ? { name: from[2] } : {}), lines: [] });
        else stages.at(-1)?.lines.push(line);
      }
      dep = parseYaml(await readFile(resolve(ROOT, 'deploy/deployment.yaml'), 'utf8')) as Obj;
    });

    it('Dockerfile: multi-stage, Node 20 build, final stage distroless nodejs20 nonroot', () => {
      assert.ok(stages.length >= 2, 'multi-stage');
      assert.match(stages[0]!.from, /^node:20[.\w-]*$/);
      assert.match(stages.at(-1)!.from, /^gcr\.io\/distroless\/nodejs20-debian12:nonroot(@sha256:[0-9a-f]{64})?$/);
    });

    it('Dockerfile: production dependencies only (npm ci from the lockfile, then pruned)', () => {
      const build = stages[0]!.lines.filter((l) => /^RUN\s/i.test(l)).join('\n');
      assert.match(build, /npm ci\b/);
      assert.match(build, /npm prune --omit=dev|npm ci[^\n]*--omit=dev/);
    });

    it('Dockerfile: the final stage copies only dist, node_modules and package.json, runs as 65532:65532, no shell', () => {
      const final = stages.at(-1)!;
      const build = stages[0]!.name;
      const copies = final.lines.filter((l) => /^(COPY|ADD)\s/i.test(l));
      const sources = copies.map((l) => {
        const m = /^COPY\s+--from=(\S+)\s+(\S+)\s+\S+$/i.exec(l);
        assert.ok(m, `only COPY --from=<build stage> <src> <dst>: ${l}`);
        assert.equal(m[1], build);
        return m[2]!.replace(/^\/app\//, '').replace(/\/$/, '');
      });
      assert.deepEqual(sources.sort(), ['dist', 'node_modules', 'package.json']);
      assert.ok(!final.lines.some((l) => /^RUN\s/i.test(l)), 'no RUN in distroless (there is no shell)');
      const users = final.lines.filter((l) => /^USER\s/i.test(l));
      assert.deepEqual(users, ['USER 65532:65532'], 'numeric, so the kubelet can verify runAsNonRoot');
      assert.ok(final.lines.includes('ENV NODE_ENV=production'));
      const cmd = final.lines.find((l) => /^CMD\s/i.test(l));
      const argv = JSON.parse(cmd!.replace(/^CMD\s+/i, '')) as string[];
      assert.notEqual(argv[0], 'node', 'the distroless entrypoint already is node');
      assert.equal(argv[0], 'dist/src/main.js', 'the path tsc emits for src/main.ts (rootDir ., outDir dist)');
    });

    it('.dockerignore keeps local node_modules, dist, tests and cluster state out of the build context', async () => {
      const ignored = (await readFile(resolve(ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim());
      for (const p of ['node_modules', 'dist', 'test', '.cluster', '.git']) assert.ok(ignored.includes(p), p);
    });

    it('Deployment: non-root 65532, seccomp RuntimeDefault, no privilege escalation, drop ALL, read-only root with /tmp emptyDir', () => {
      const pod = dep.spec.template.spec as Obj;
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(pod.securityContext.runAsUser, 65532);
      assert.equal(pod.securityContext.runAsGroup, 65532);
      assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
      for (const k of ['hostNetwork', 'hostPID', 'hostIPC']) assert.ok(!pod[k], k);
      const tmp = (pod.volumes as Obj[]).find((v) => v.name === 'tmp');
      assert.deepEqual(tmp, { name: 'tmp', emptyDir: {} });
      assert.ok(!(pod.volumes as Obj[]).some((v) => v.hostPath), 'no hostPath');
      for (const c of pod.containers as Obj[]) {
        const sc = c.securityContext as Obj;
        assert.equal(sc.allowPrivilegeEscalation, false, c.name);
        assert.equal(sc.readOnlyRootFilesystem, true, c.name);
        assert.ok(!sc.privileged, c.name);
        assert.ok((sc.capabilities.drop as string[]).includes('ALL'), c.name);
        assert.ok(((sc.capabilities.add ?? []) as string[]).every((a) => a === 'NET_BIND_SERVICE'), c.name);
        assert.ok(sc.runAsUser === undefined || sc.runAsUser === 65532, c.name);
        assert.ok((c.volumeMounts as Obj[]).some((m) => m.name === 'tmp' && m.mountPath === '/tmp'), `${c.name}: /tmp is writable`);
        assert.ok(!((c.ports ?? []) as Obj[]).some((p) => p.hostPort), `${c.name}: no hostPort`);
        assert.ok(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory, `${c.name}: resources`);
        assert.doesNotMatch(c.image as string, /:latest$|^[^:]+$/, `${c.name}: a pinned tag`);
      }
    });

    it('Deployment: HTTP probes only (no shell in the image), on /healthz and /readyz', () => {
      for (const c of dep.spec.template.spec.containers as Obj[]) {
        for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
          if (!c[p]) continue;
          assert.equal(c[p].exec, undefined, `${c.name} ${p}: exec`);
          assert.ok(c[p].httpGet, `${c.name} ${p}: httpGet`);
        }
        assert.equal(c.livenessProbe.httpGet.path, '/healthz');
        assert.equal(c.readinessProbe.httpGet.path, '/readyz');
      }
    });

    it('Deployment: terminationGracePeriodSeconds covers the shutdown budget plus 5 s, and the image user matches', () => {
      const pod = dep.spec.template.spec as Obj;
      const env = ((pod.containers as Obj[])[0]!.env ?? []) as Obj[];
      const override = env.find((e) => e.name === 'SHUTDOWN_BUDGET_MS')?.value as string | undefined;
      const budgetS = (override ? Number(override) : DEFAULTS.shutdownBudgetMs) / 1000;
      assert.ok(pod.terminationGracePeriodSeconds >= budgetS + 5, `${pod.terminationGracePeriodSeconds} s >= ${budgetS} s + 5 s`);
    });

    it('NetworkPolicy: egress to the API server and DNS only', async () => {
      const [np] = await yamlDocs('deploy/networkpolicy.yaml');
      assert.ok(np);
      assert.ok((np.spec.policyTypes as string[]).includes('Egress'));
      const ports = (np.spec.egress as Obj[]).flatMap((r) => (r.ports as Obj[]).map((p) => `${p.protocol}/${p.port}`));
      assert.deepEqual(ports.sort(), ['TCP/443', 'TCP/53', 'TCP/6443', 'UDP/53']);
    });
  });
});
