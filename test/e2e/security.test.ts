/**
 * End to end: least privilege and Pod Security, proven against the real API server; the image and the
 * Deployment's hardening, checked statically (there is no container runtime here to build the image).
 *
 * RBAC: the objects `kubectl kustomize` renders for each install (config/rbac, config/report-only,
 * config/no-policies, config/namespaced) are installed unchanged except for their names: cluster-scoped
 * ones get a unique suffix and namespaced ones move to unique namespaces (for config/namespaced, its
 * example watched namespaces team-a and team-b, and rollout-guard-system, each get a stand-in). Other
 * suites run concurrently against the same cluster and may install or revoke the real `rollout-guard`
 * bindings; our copies cannot race with them, and are deleted afterwards. Then
 * `kubectl auth can-i --as=system:serviceaccount:<ns>:rollout-guard` asks the API server's own authorizer
 * what the operator may and may not do.
 *
 * Pod Security: the Deployment from `deploy/` goes into a unique namespace carrying the labels of
 * deploy/namespace.yaml (enforce=restricted); the real PodSecurity admission plugin decides. A copy of
 * the pod without runAsNonRoot and seccompProfile must be refused there, so the test would fail if
 * admission were off.
 *
 * NetworkPolicy and PodDisruptionBudget: their shape is checked statically, and the API server validates
 * them (and the documented one-line patches of the policy) with `kubectl apply --dry-run=server`. No
 * network plugin enforces policies on the local control plane, so what they block is not exercised.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { DEFAULTS } from '../../src/runtime/config.js';
import {
  POOL_LABEL,
  createNamespaceIn,
  createNodePool,
  ensureCluster,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { ROOT, apply } from '../support/operator.js';
import { OPERATOR_MAIN } from '../../cluster/operatorProcess.js';
import {
  ALLOWED,
  DENIED,
  INSTALL_NS,
  POLICY_ALLOWED,
  RBAC_KINDS,
  UNDO_ALLOWED,
  canI,
  expectCan,
  inNamespace,
  relocateRbac,
} from '../support/rbac.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML */
type Obj = Record<string, any>;

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Label on every object this suite creates outside its namespaces, for cleanup. */
const TEST_LABEL = 'rollout-guard.dev/security-test';

async function kustomize(dir: string): Promise<Obj[]> {
  const { stdout } = await kubectl(['kustomize', resolve(ROOT, dir)]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

/**
 * deploy/ hardened as docs/install.md ("NetworkPolicy") says: a throw-away kustomization of deploy/ with the component
 * deploy/networkpolicy and these `patches` entries (one YAML line each).
 */
async function hardened(patches: readonly string[] = []): Promise<Obj[]> {
  const dir = await mkdtemp(resolve(tmpdir(), 'rg-sec-overlay-'));
  try {
    // kustomize refuses absolute resource paths; a relative one may leave the overlay's directory.
    const rel = (p: string): string => relative(dir, resolve(ROOT, p));
    const lines = ['resources:', `  - ${rel('deploy')}`, 'components:', `  - ${rel('deploy/networkpolicy')}`];
    if (patches.length > 0) lines.push('patches:', ...patches.map((p) => `  - ${p}`));
    await writeFile(resolve(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    const { stdout } = await kubectl(['kustomize', dir]);
    return parseAllDocuments(stdout)
      .map((d) => d.toJS() as Obj)
      .filter(Boolean);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function yamlDocs(file: string): Promise<Obj[]> {
  return parseAllDocuments(await readFile(resolve(ROOT, file), 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

/**
 * The RBAC objects of a rendering, renamed (only) so that they cannot collide: namespaced objects move
 * to the namespace `namespaces` maps theirs to, ServiceAccount subjects move from INSTALL_NS to
 * `namespaces[INSTALL_NS]`, cluster-scoped names and ClusterRole references get `suffix`.
 */
function relocate(docs: readonly Obj[], namespaces: Readonly<Record<string, string>>, suffix: string): Obj[] {
  const to = (ns: string, what: string): string => {
    const mapped = namespaces[ns];
    assert.ok(mapped, `${what} lives in ${ns}, which this copy has no namespace for`);
    return mapped;
  };
  return relocateRbac(docs, TEST_LABEL, suffix, {
    namespace: (o) => to(o.metadata.namespace as string, `${o.kind}/${o.metadata.name}`),
    subject: (s, o) => {
      if (s.kind === 'ServiceAccount') {
        assert.equal(s.namespace, INSTALL_NS);
        s.namespace = to(INSTALL_NS, `subject of ${o.kind}/${o.metadata.name}`);
      }
    },
  });
}

interface Grant {
  role: string;
  kind: string;
  ns?: string;
  group: string;
  resource: string;
  verb: string;
}

/** Every (role, group, resource, verb) a rendering's Roles and ClusterRoles grant. */
function grantsOf(docs: readonly Obj[]): Grant[] {
  const grants: Grant[] = [];
  for (const d of docs) {
    for (const r of (d.rules ?? []) as Rule[]) {
      for (const g of r.apiGroups ?? []) {
        for (const res of r.resources ?? []) {
          for (const v of r.verbs)
            grants.push({
              role: `${d.kind}/${d.metadata.name}`,
              kind: d.kind as string,
              ns: d.metadata.namespace,
              group: g || 'core',
              resource: res,
              verb: v,
            });
        }
      }
    }
  }
  return grants;
}

const WRITE = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const where = (g: Grant): string => `${g.role}${g.ns ? ` (${g.ns})` : ''} ${g.verb} ${g.group}/${g.resource}`;

/** Least privilege, as properties of a grant rather than a snapshot of it; holds for every install. */
function assertLeastPrivilege(docs: readonly Obj[]): void {
  const grants = grantsOf(docs);
  assert.ok(grants.length >= 10, `found the grants (${grants.length})`);
  const writes = grants.filter((g) => WRITE.has(g.verb));
  const reads = grants.filter((g) => !WRITE.has(g.verb));
  const undoRole = (g: Grant): boolean => g.role === 'ClusterRole/rollout-guard-undo' || g.role === 'Role/rollout-guard-undo';

  // 1. Only the verbs a reader needs: get, list, watch. No proxy, no exec, no port-forward.
  for (const g of reads) assert.ok(['get', 'list', 'watch'].includes(g.verb), where(g));
  // 2. Nothing of someone else's is written, except the template patch of an undo (and its dry run) and a
  //    StatefulSet's forced rollback (an eviction, never a delete), bound apart.
  for (const g of writes) {
    const ours = g.group === 'rolloutguard.dev';
    const events = g.group === 'events.k8s.io' && g.resource === 'events' && g.verb === 'create';
    const lease = g.group === 'coordination.k8s.io' && g.resource === 'leases';
    const undo =
      undoRole(g) &&
      ((g.group === 'apps' && ['daemonsets', 'statefulsets', 'deployments'].includes(g.resource) && g.verb === 'patch') ||
        (g.group === 'core' && (g.resource === 'pods' || g.resource === 'pods/eviction') && g.verb === 'create'));
    assert.ok(ours || events || lease || undo, `a write outside our own objects, new Events, the Lease and the undo: ${where(g)}`);
  }
  // 3. An undo role grants exactly the undo patch, the pod dry runs that judge admission refusals before
  //    it, the forced rollback's evictions and the list of Argo Rollouts read before a Deployment's undo,
  //    so a report-only install drops them whole.
  for (const role of new Set(grants.filter(undoRole).map((g) => `${g.role} ${g.ns ?? ''}`))) {
    assert.deepEqual(
      grants
        .filter((g) => `${g.role} ${g.ns ?? ''}` === role)
        .map((g) => `${g.verb} ${g.group}/${g.resource}`)
        .sort(),
      [
        'create core/pods',
        'create core/pods/eviction',
        'list argoproj.io/rollouts',
        'patch apps/daemonsets',
        'patch apps/deployments',
        'patch apps/statefulsets',
      ],
      role,
    );
  }
  // 4. Of our own objects, only status is patched; guards are created, patched and deleted by the policy
  //    role alone, and are the only thing ever deleted.
  for (const g of writes.filter((x) => x.group === 'rolloutguard.dev')) {
    if (g.resource.endsWith('/status')) assert.equal(g.verb, 'patch', where(g));
    else {
      assert.equal(g.resource, 'rolloutguards', where(g));
      assert.ok(['create', 'patch', 'delete'].includes(g.verb), where(g));
      assert.equal(g.role, 'ClusterRole/rollout-guard-policies', `guard writes belong to the policy controller's role: ${where(g)}`);
    }
  }
  for (const g of writes.filter((x) => x.verb === 'delete'))
    assert.equal(`${g.group}/${g.resource}`, 'rolloutguard.dev/rolloutguards', where(g));
  assert.ok(!grants.some((g) => g.verb === 'deletecollection'), 'no deletecollection');
  // 5. Leases only in a namespaced Role (the operator's namespace), and never deleted.
  for (const g of grants.filter((x) => x.resource === 'leases')) {
    assert.equal(g.kind, 'Role', where(g));
    assert.equal(g.ns, INSTALL_NS, where(g));
    assert.ok(g.verb !== 'delete', where(g));
  }
  // 6. Pods and nodes are read, never written: no deletion, no binding, no exec. The exceptions are in the
  //    undo role: create on pods for server-side dry runs, and on pods/eviction for the forced rollback (3).
  for (const g of grants.filter((x) => ['pods', 'nodes', 'pods/eviction', 'pods/exec', 'bindings'].includes(x.resource))) {
    assert.ok(
      !WRITE.has(g.verb) || (undoRole(g) && (g.resource === 'pods' || g.resource === 'pods/eviction') && g.verb === 'create'),
      where(g),
    );
  }
  // 7. Core Events are only read (the Warnings that explain a node); ours go through events.k8s.io, and
  //    are only created: the operator never patches an Event.
  for (const g of grants.filter((x) => x.resource === 'events')) {
    if (g.group === 'core') assert.ok(!WRITE.has(g.verb), where(g));
    else assert.ok(!WRITE.has(g.verb) || g.verb === 'create', where(g));
  }
}

/** The Deployment's environment variable `name`, or undefined. */
function envOf(rendered: readonly Obj[], name: string): string | undefined {
  const dep = rendered.find((d) => d.kind === 'Deployment');
  assert.ok(dep, 'a Deployment');
  const env = ((dep.spec.template.spec.containers as Obj[])[0]!.env ?? []) as Obj[];
  return env.find((e) => e.name === name)?.value as string | undefined;
}

const key = (d: Obj): string => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;

describe('security', () => {
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    await ensureCluster();
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  describe(
    'RBAC: the cluster-wide installs (deploy/, config/report-only, config/no-policies) installed into the API server and checked with kubectl auth can-i',
    { concurrency: 8 },
    () => {
      const suffix = uniqueName('sec').replace(/^sec-/, 'sec');
      let full: Obj[];
      let deployRbac: Obj[];
      let reportOnly: Obj[];
      let noPolicies: Obj[];
      let saFull: string;
      let saReport: string;
      let saNoPolicies: string;
      let nsFull: string;

      before(async () => {
        full = await kustomize('config/rbac');
        deployRbac = (await kustomize('deploy')).filter((d) => RBAC_KINDS.has(d.kind as string));
        reportOnly = (await kustomize('config/report-only')).filter((d) => RBAC_KINDS.has(d.kind as string));
        noPolicies = await kustomize('config/no-policies');
        nsFull = uniqueName('sec-rbac');
        const nsReport = uniqueName('sec-rbac-ro');
        const nsNoPolicies = uniqueName('sec-rbac-np');
        cleanups.push(async () => {
          for (const s of [suffix, `${suffix}-ro`, `${suffix}-np`])
            await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${s}`, '--ignore-not-found']);
          await kubectl(['delete', 'namespace', nsFull, nsReport, nsNoPolicies, '--ignore-not-found', '--wait=false']);
        });
        for (const ns of [nsFull, nsReport, nsNoPolicies]) await createNamespaceIn(kubectl, ns);
        await apply({ apiVersion: 'v1', kind: 'List', items: relocate(full, { [INSTALL_NS]: nsFull }, suffix) });
        await apply({ apiVersion: 'v1', kind: 'List', items: relocate(reportOnly, { [INSTALL_NS]: nsReport }, `${suffix}-ro`) });
        await apply({ apiVersion: 'v1', kind: 'List', items: relocate(noPolicies, { [INSTALL_NS]: nsNoPolicies }, `${suffix}-np`) });
        saFull = `system:serviceaccount:${nsFull}:rollout-guard`;
        saReport = `system:serviceaccount:${nsReport}:rollout-guard`;
        saNoPolicies = `system:serviceaccount:${nsNoPolicies}:rollout-guard`;
        // RBAC changes reach the authorizer through its informers: wait until the bindings are in effect.
        await waitFor(
          async () =>
            (await canI(saFull, ['patch', 'daemonsets.apps', '-n', 'default'])) &&
            (await canI(saFull, ['create', 'rolloutguards.rolloutguard.dev', '-n', 'default'])) &&
            (await canI(saReport, ['list', 'pods', '-A'])) &&
            (await canI(saNoPolicies, ['patch', 'daemonsets.apps', '-n', 'default'])),
          { timeoutMs: 30_000, describe: 'RBAC copies in effect' },
        );
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
        for (const { where: w, rule } of rules) {
          const all = [
            ...(rule.apiGroups ?? []),
            ...(rule.resources ?? []),
            ...rule.verbs,
            ...(rule.resourceNames ?? []),
            ...(rule.nonResourceURLs ?? []),
          ];
          assert.ok(!all.some((x) => x.includes('*')), `${w}: wildcard in ${JSON.stringify(rule)}`);
          for (const v of ['escalate', 'bind', 'impersonate']) assert.ok(!rule.verbs.includes(v), `${w}: ${v}`);
          for (const res of ['secrets', 'configmaps']) assert.ok(!(rule.resources ?? []).includes(res), `${w}: ${res}`);
          assert.equal(rule.nonResourceURLs, undefined, `${w}: non-resource URLs`);
        }
      });

      it('statically: least privilege, as properties of the grant rather than a snapshot of it', () => {
        assertLeastPrivilege(full);
      });

      it("statically: guards are created, patched and deleted only through the rollout-guard-policies binding, which holds nothing else but the policy controller's reads", () => {
        const grants = grantsOf(full);
        const policyRole = grants.filter((g) => g.role === 'ClusterRole/rollout-guard-policies');
        assert.deepEqual(policyRole.map((g) => `${g.verb} ${g.group}/${g.resource}`).sort(), [
          'create rolloutguard.dev/rolloutguards',
          'delete rolloutguard.dev/rolloutguards',
          'get core/namespaces',
          'get rolloutguard.dev/rolloutguardpolicies',
          'get rolloutguard.dev/rolloutguardpolicies/status',
          'list core/namespaces',
          'list rolloutguard.dev/rolloutguardpolicies',
          'patch rolloutguard.dev/rolloutguardpolicies/status',
          'patch rolloutguard.dev/rolloutguards',
          'watch core/namespaces',
          'watch rolloutguard.dev/rolloutguardpolicies',
        ]);
        // Nothing the policy controller alone needs is granted by another role.
        for (const g of grants.filter((x) => x.role !== 'ClusterRole/rollout-guard-policies')) {
          assert.ok(!(g.resource === 'rolloutguards' && WRITE.has(g.verb)), where(g));
          assert.ok(!['namespaces', 'rolloutguardpolicies', 'rolloutguardpolicies/status'].includes(g.resource), where(g));
        }
        const binding = full.find((d) => d.kind === 'ClusterRoleBinding' && d.roleRef.name === 'rollout-guard-policies');
        assert.equal(binding?.metadata.name, 'rollout-guard-policies');
      });

      it('statically: config/report-only is the full install minus the undo binding, nothing else', () => {
        const missing = deployRbac.filter((d) => !reportOnly.some((r) => key(r) === key(d))).map(key);
        assert.deepEqual(missing, ['ClusterRoleBinding//rollout-guard-undo']);
        for (const r of reportOnly)
          assert.deepEqual(
            r,
            deployRbac.find((d) => key(d) === key(r)),
            `${key(r)} unchanged`,
          );
        // The undo ClusterRole itself may stay: unbound, it grants nothing.
      });

      it('statically: config/no-policies is the full install minus the policies binding, with ENABLE_POLICIES=false, nothing else', async () => {
        const deploy = await kustomize('deploy');
        assert.equal(envOf(deploy, 'ENABLE_POLICIES'), 'true', 'deploy/ runs the policy controller it grants');
        assert.equal(envOf(noPolicies, 'ENABLE_POLICIES'), 'false');
        const missing = deploy.filter((d) => !noPolicies.some((r) => key(r) === key(d))).map(key);
        assert.deepEqual(missing, ['ClusterRoleBinding//rollout-guard-policies']);
        const withoutPolicyEnv = (d: Obj): Obj => {
          if (d.kind !== 'Deployment') return d;
          const o = structuredClone(d);
          for (const c of o.spec.template.spec.containers as Obj[]) c.env = (c.env as Obj[]).filter((e) => e.name !== 'ENABLE_POLICIES');
          return o;
        };
        for (const r of noPolicies)
          assert.deepEqual(withoutPolicyEnv(r), withoutPolicyEnv(deploy.find((d) => key(d) === key(r))!), `${key(r)} unchanged`);
      });

      for (const args of [...ALLOWED, ...POLICY_ALLOWED, ...UNDO_ALLOWED]) {
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
        for (const v of ['get', 'create', 'update'])
          assert.equal(await canI(saFull, [v, 'leases.coordination.k8s.io', '-n', nsFull]), true, v);
        assert.equal(await canI(saFull, ['delete', 'leases.coordination.k8s.io', '-n', nsFull]), false, 'delete');
      });

      it('report-only install: cannot patch DaemonSets, and can still do everything else it needs', async () => {
        assert.equal(await canI(saReport, ['patch', 'daemonsets.apps', '-n', 'default']), false);
        assert.equal(await canI(saReport, ['patch', 'daemonsets.apps', '-A']), false);
        // Nor the pod dry runs that only an undo needs.
        await expectCan(saReport, UNDO_ALLOWED, false);
        await expectCan(saReport, [...ALLOWED, ...POLICY_ALLOWED], true);
        await expectCan(saReport, DENIED, false);
      });

      it('no-policies install: cannot create, patch or delete guards, nor read policies or namespaces; can still do everything else it needs', async () => {
        for (const v of ['create', 'patch', 'delete']) {
          assert.equal(await canI(saNoPolicies, [v, 'rolloutguards.rolloutguard.dev', '-n', 'default']), false, v);
          assert.equal(await canI(saNoPolicies, [v, 'rolloutguards.rolloutguard.dev', '-A']), false, `${v} -A`);
        }
        await expectCan(saNoPolicies, POLICY_ALLOWED, false);
        await expectCan(saNoPolicies, [...ALLOWED, ...UNDO_ALLOWED], true);
        await expectCan(saNoPolicies, DENIED, false);
      });

      it('guards are created, patched and deleted only with the policies binding', async () => {
        const guardWrites = ['create', 'patch', 'delete'].map((v) => [v, 'rolloutguards.rolloutguard.dev', '-n', 'default']);
        await expectCan(saFull, guardWrites, true);
        await expectCan(saReport, guardWrites, true);
        await expectCan(saNoPolicies, guardWrites, false);
      });

      it('no install can patch, update or delete an Event, in any namespace', async () => {
        const eventWrites = ['patch', 'update', 'delete'].flatMap((v) => [
          [v, 'events.events.k8s.io', '-A'],
          [v, 'events.events.k8s.io', '-n', 'default'],
          [v, 'events', '-A'],
          [v, 'events', '-n', 'default'],
        ]);
        for (const sa of [saFull, saReport, saNoPolicies]) await expectCan(sa, eventWrites, false);
      });
    },
  );

  describe('RBAC: config/namespaced installed into the API server and checked with kubectl auth can-i', { concurrency: 8 }, () => {
    const suffix = uniqueName('secns').replace(/^secns-/, 'secns');
    let rendered: Obj[];
    let rbac: Obj[];
    /** The example namespaces of config/namespaced (team-a, team-b), in WATCH_NAMESPACES order. */
    let watchedExample: string[];
    let nsOp: string;
    /** Our stand-ins for the watched namespaces. */
    let watched: string[];
    let unwatched: string;
    let sa: string;

    /** Reads in a watched namespace. */
    const NS_READS: ReadonlyArray<readonly string[]> = ['get', 'list', 'watch'].flatMap((v) =>
      ['daemonsets.apps', 'controllerrevisions.apps', 'pods', 'rolloutguards.rolloutguard.dev', 'events'].map((r) => [
        v,
        r,
        '-n',
        'default',
      ]),
    );

    before(async () => {
      rendered = await kustomize('config/namespaced');
      rbac = rendered.filter((d) => RBAC_KINDS.has(d.kind as string));
      watchedExample = (envOf(rendered, 'WATCH_NAMESPACES') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      assert.ok(watchedExample.length >= 2, `WATCH_NAMESPACES names the example namespaces: ${watchedExample.join(',')}`);
      nsOp = uniqueName('sec-ns-op');
      watched = watchedExample.map((_, i) => uniqueName(`sec-ns-w${i}`));
      unwatched = uniqueName('sec-ns-other');
      cleanups.push(async () => {
        await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${suffix}`, '--ignore-not-found']);
        await kubectl(['delete', 'namespace', nsOp, ...watched, unwatched, '--ignore-not-found', '--wait=false']);
      });
      for (const ns of [nsOp, ...watched, unwatched]) await createNamespaceIn(kubectl, ns);
      const map: Record<string, string> = { [INSTALL_NS]: nsOp };
      watchedExample.forEach((ns, i) => (map[ns] = watched[i]!));
      await apply({ apiVersion: 'v1', kind: 'List', items: relocate(rbac, map, suffix) });
      sa = `system:serviceaccount:${nsOp}:rollout-guard`;
      await waitFor(
        async () => {
          for (const ns of watched)
            if (!(await canI(sa, ['patch', 'daemonsets.apps', '-n', ns])) || !(await canI(sa, ['list', 'pods', '-n', ns]))) return false;
          return (await canI(sa, ['list', 'nodes'])) && (await canI(sa, ['update', 'leases.coordination.k8s.io', '-n', nsOp]));
        },
        { timeoutMs: 30_000, describe: 'namespaced RBAC copies in effect' },
      );
    });

    it('statically: the Deployment watches exactly the namespaces that have the Roles, with policies off', () => {
      assert.equal(envOf(rendered, 'ENABLE_POLICIES'), 'false');
      const roleNamespaces = [
        ...new Set(rbac.filter((d) => d.kind === 'Role' && d.metadata.namespace !== INSTALL_NS).map((d) => d.metadata.namespace as string)),
      ];
      assert.deepEqual(roleNamespaces.sort(), [...watchedExample].sort());
      for (const ns of watchedExample) {
        const names = rbac
          .filter((d) => d.metadata.namespace === ns)
          .map((d) => `${d.kind}/${d.metadata.name}`)
          .sort();
        assert.deepEqual(
          names,
          ['Role/rollout-guard', 'Role/rollout-guard-undo', 'RoleBinding/rollout-guard', 'RoleBinding/rollout-guard-undo'],
          ns,
        );
      }
    });

    it('statically: apart from RBAC, config/namespaced is deploy/ with WATCH_NAMESPACES and ENABLE_POLICIES=false, nothing else', async () => {
      const deploy = (await kustomize('deploy')).filter((d) => !RBAC_KINDS.has(d.kind as string));
      const ours = rendered.filter((d) => !RBAC_KINDS.has(d.kind as string));
      assert.deepEqual(ours.map(key).sort(), deploy.map(key).sort());
      const withoutScopeEnv = (d: Obj): Obj => {
        if (d.kind !== 'Deployment') return d;
        const o = structuredClone(d);
        for (const c of o.spec.template.spec.containers as Obj[])
          c.env = (c.env as Obj[]).filter((e) => e.name !== 'ENABLE_POLICIES' && e.name !== 'WATCH_NAMESPACES');
        return o;
      };
      for (const r of ours)
        assert.deepEqual(withoutScopeEnv(r), withoutScopeEnv(deploy.find((d) => key(d) === key(r))!), `${key(r)} unchanged`);
      assert.equal(envOf(deploy, 'WATCH_NAMESPACES'), undefined, 'deploy/ watches every namespace');
    });

    it('statically: cluster-wide it can only read nodes; the Lease Role stays in rollout-guard-system; no ClusterRole of the cluster install is left', () => {
      const cluster = grantsOf(rbac.filter((d) => d.kind === 'ClusterRole'));
      assert.deepEqual(cluster.map((g) => `${g.verb} ${g.group}/${g.resource}`).sort(), [
        'get core/nodes',
        'list core/nodes',
        'watch core/nodes',
      ]);
      const bindings = rbac.filter((d) => d.kind === 'ClusterRoleBinding');
      assert.deepEqual(
        bindings.map((b) => b.roleRef.name as string),
        ['rollout-guard-nodes'],
      );
      assert.deepEqual(
        rbac
          .filter((d) => d.metadata.namespace === INSTALL_NS)
          .map((d) => `${d.kind}/${d.metadata.name}`)
          .sort(),
        ['Role/rollout-guard-leader-election', 'RoleBinding/rollout-guard-leader-election', 'ServiceAccount/rollout-guard'],
      );
      for (const d of rbac)
        for (const s of (d.subjects ?? []) as Obj[])
          assert.deepEqual(s, { kind: 'ServiceAccount', name: 'rollout-guard', namespace: INSTALL_NS }, key(d));
    });

    it('statically: least privilege, the same properties as the cluster install, and no rule uses *', () => {
      assertLeastPrivilege(rbac);
      for (const g of grantsOf(rbac)) assert.ok(![g.group, g.resource, g.verb].some((x) => x.includes('*')), where(g));
    });

    it('can patch DaemonSets (the undo) in a watched namespace', async () => {
      await expectCan(
        sa,
        watched.map((ns) => ['patch', 'daemonsets.apps', '-n', ns]),
        true,
      );
    });

    it('cannot patch DaemonSets in kube-system, default, an unwatched namespace, or across namespaces', async () => {
      await expectCan(
        sa,
        [
          ['patch', 'daemonsets.apps', '-n', 'kube-system'],
          ['patch', 'daemonsets.apps', '-n', 'default'],
          ['patch', 'daemonsets.apps', '-n', unwatched],
          ['patch', 'daemonsets.apps', '-A'],
        ],
        false,
      );
    });

    it('cannot create, patch or delete RolloutGuards anywhere', async () => {
      const nss = [...watched, unwatched, 'default', 'kube-system'];
      const q = ['create', 'patch', 'delete', 'update'].flatMap((v) => [
        [v, 'rolloutguards.rolloutguard.dev', '-A'],
        ...nss.map((ns) => [v, 'rolloutguards.rolloutguard.dev', '-n', ns]),
      ]);
      await expectCan(sa, q, false);
    });

    it('can patch rolloutguards/status in the watched namespaces only', async () => {
      const q = (ns: string): string[] => ['patch', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', ns];
      await expectCan(sa, watched.map(q), true);
      await expectCan(
        sa,
        [q(unwatched), q('default'), q('kube-system'), ['patch', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-A']],
        false,
      );
    });

    it('can create Events (events.k8s.io) in the watched namespaces only, and cannot patch, update or delete an Event anywhere', async () => {
      await expectCan(
        sa,
        watched.map((ns) => ['create', 'events.events.k8s.io', '-n', ns]),
        true,
      );
      await expectCan(
        sa,
        [unwatched, 'default', 'kube-system'].map((ns) => ['create', 'events.events.k8s.io', '-n', ns]),
        false,
      );
      const nss = [...watched, unwatched, 'default'];
      const writes = ['patch', 'update', 'delete'].flatMap((v) => [
        [v, 'events.events.k8s.io', '-A'],
        [v, 'events', '-A'],
        ...nss.flatMap((ns) => [
          [v, 'events.events.k8s.io', '-n', ns],
          [v, 'events', '-n', ns],
        ]),
      ]);
      await expectCan(sa, [...writes, ...watched.map((ns) => ['create', 'events', '-n', ns])], false);
    });

    it('reads DaemonSets, ControllerRevisions, pods, guards and core Events in the watched namespaces only', async () => {
      for (const ns of watched) await expectCan(sa, inNamespace(NS_READS, ns), true);
      await expectCan(sa, [...inNamespace(NS_READS, unwatched), ...NS_READS, ...inNamespace(NS_READS, 'kube-system')], false);
      await expectCan(
        sa,
        NS_READS.map((q) => [q[0]!, q[1]!, '-A']),
        false,
      );
    });

    it('can list and watch nodes; reads nothing else cluster-wide (no namespaces, no RolloutGuardPolicies)', async () => {
      await expectCan(
        sa,
        [
          ['get', 'nodes'],
          ['list', 'nodes'],
          ['watch', 'nodes'],
        ],
        true,
      );
      await expectCan(sa, [...POLICY_ALLOWED, ['get', 'namespaces'], ['get', 'rolloutguardpolicies.rolloutguard.dev']], false);
    });

    it('nothing it must never do, in a watched namespace either', async () => {
      await expectCan(sa, DENIED, false);
      for (const ns of watched) await expectCan(sa, inNamespace(DENIED, ns), false);
    });

    it('leader election works in its own namespace only', async () => {
      await expectCan(
        sa,
        ['get', 'create', 'update'].map((v) => [v, 'leases.coordination.k8s.io', '-n', nsOp]),
        true,
      );
      await expectCan(
        sa,
        [['delete', 'leases.coordination.k8s.io', '-n', nsOp], ...watched.map((ns) => ['update', 'leases.coordination.k8s.io', '-n', ns])],
        false,
      );
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
      await createNamespaceIn(kubectl, ns, nsLabels);
      const sa = rendered.find((d) => d.kind === 'ServiceAccount')!;
      await apply({ ...sa, metadata: { ...sa.metadata, namespace: ns } });
    });

    it('deploy/namespace.yaml enforces, warns and audits the restricted profile', () => {
      assert.equal(nsLabels['pod-security.kubernetes.io/enforce'], 'restricted');
      assert.equal(nsLabels['pod-security.kubernetes.io/warn'], 'restricted');
      assert.equal(nsLabels['pod-security.kubernetes.io/audit'], 'restricted');
    });

    it('the Deployment is admitted without a warning and its pods are created, not refused', async () => {
      const d = structuredClone(deployment);
      d.metadata.namespace = ns;
      // Scheduling only; nodeSelector is not part of any Pod Security profile.
      d.spec.template.spec.nodeSelector = { [POOL_LABEL]: pool.name };
      const res = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(d) });
      // warn=restricted makes the API server check the pod template of a workload at apply time.
      assert.doesNotMatch(res.stderr, /PodSecurity/, res.stderr);
      const replicas = d.spec.replicas as number;
      await waitFor(
        async () => {
          const pods = await kubectlJson<{ items: unknown[] }>(['get', 'pods', '-l', 'app.kubernetes.io/name=rollout-guard'], { ns });
          return pods.items.length === replicas;
        },
        { timeoutMs: 60_000, describe: `${replicas} pods created` },
      );
      const evs = await kubectlJson<{ items: Array<{ reason: string; message: string }> }>(
        ['get', 'events', '--field-selector=involvedObject.kind=ReplicaSet'],
        { ns },
      );
      assert.deepEqual(
        evs.items.filter((e) => e.reason === 'FailedCreate').map((e) => e.message),
        [],
      );
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
      await waitFor(
        async () => {
          const evs = await kubectlJson<{ items: Array<{ reason: string; message: string }> }>(
            ['get', 'events', '--field-selector=involvedObject.kind=ReplicaSet,reason=FailedCreate'],
            { ns },
          );
          return evs.items.some((e) => e.message.includes('violates PodSecurity'));
        },
        { timeoutMs: 60_000, describe: 'FailedCreate: violates PodSecurity' },
      );
      const pods = await kubectlJson<{ items: unknown[] }>(['get', 'pods', '-l', 'app=insecure'], { ns });
      assert.equal(pods.items.length, 0);
    });
  });

  describe('image and Deployment hardening (static: no container runtime here to build the image)', () => {
    let stages: Array<{ from: string; name?: string; lines: string[] }>;
    let dep: Obj;
    let rendered: Obj[];
    let withPolicy: Obj[];

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
      rendered = await kustomize('deploy');
      withPolicy = await hardened();
    });

    it('Dockerfile: multi-stage, Node 24 (LTS) build, final stage distroless nodejs24 nonroot', () => {
      assert.ok(stages.length >= 2, 'multi-stage');
      assert.match(stages[0]!.from, /^node:24[.\w-]*$/);
      assert.match(stages.at(-1)!.from, /^gcr\.io\/distroless\/nodejs24-debian12:nonroot(@sha256:[0-9a-f]{64})?$/);
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
    });

    it("Dockerfile and Deployments: the entrypoint is node and the entry point; a Deployment's args are the subcommand", () => {
      const final = stages.at(-1)!;
      const exec = (kw: string): string[] => {
        const l = final.lines.find((x) => new RegExp(`^${kw}\\s`, 'i').test(x));
        assert.ok(l, kw);
        return JSON.parse(l.replace(new RegExp(`^${kw}\\s+`, 'i'), '')) as string[];
      };
      const entrypoint = exec('ENTRYPOINT');
      // Kubernetes `args` replace the image's CMD and keep its ENTRYPOINT: the entry point must be in
      // the ENTRYPOINT, or `args: [run]` would run `node run`.
      // --expose-gc: the idle collector gives back what a burst of work reserved; the harness starts the
      // operator the same way (cluster/operatorProcess.ts).
      assert.deepEqual(
        entrypoint,
        ['/nodejs/bin/node', '--expose-gc', 'dist/src/main.js'],
        'the path tsc emits for src/main.ts (rootDir ., outDir dist)',
      );
      assert.equal(OPERATOR_MAIN, resolve(ROOT, entrypoint.at(-1)!));
      assert.deepEqual(exec('CMD'), ['run']);
      // The chart's args are checked by the chart suite.
      type Container = { args?: string[]; command?: unknown };
      for (const d of [dep, ...rendered.filter((o) => o.kind === 'Deployment')]) {
        const c = ((d.spec as Obj).template as { spec: { containers: Container[] } }).spec.containers[0]!;
        assert.equal(c.command, undefined, 'the image entrypoint is kept');
        assert.equal(c.args?.[0], 'run', 'args start with the subcommand');
      }
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
        assert.ok(
          ((sc.capabilities.add ?? []) as string[]).every((a) => a === 'NET_BIND_SERVICE'),
          c.name,
        );
        assert.ok(sc.runAsUser === undefined || sc.runAsUser === 65532, c.name);
        assert.ok(
          (c.volumeMounts as Obj[]).some((m) => m.name === 'tmp' && m.mountPath === '/tmp'),
          `${c.name}: /tmp is writable`,
        );
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

    it('Deployment: probes on the `probes` port (8081); /metrics exposed on the `metrics` port (8080)', () => {
      const c = (dep.spec.template.spec.containers as Obj[])[0]!;
      const ports = (c.ports as Obj[]).map((p) => `${p.name}=${p.protocol ?? 'TCP'}/${p.containerPort}`).sort();
      assert.deepEqual(ports, ['metrics=TCP/8080', 'probes=TCP/8081']);
      for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) if (c[p]) assert.equal(c[p].httpGet.port, 'probes', p);
      assert.ok(
        !((c.args ?? []) as string[]).some((a) => /^--(port|metrics-bind-address|health-probe-bind-address)\b/.test(a)),
        "the operator's default listeners, no flag",
      );
    });

    it('Deployment: preferred (not required) pod anti-affinity on kubernetes.io/hostname, selecting its own pods', () => {
      const pod = dep.spec.template.spec as Obj;
      const anti = pod.affinity?.podAntiAffinity as Obj | undefined;
      assert.ok(anti, 'podAntiAffinity');
      assert.equal(
        anti.requiredDuringSchedulingIgnoredDuringExecution,
        undefined,
        'required would leave a replica Pending on a one-node cluster',
      );
      const terms = anti.preferredDuringSchedulingIgnoredDuringExecution as Obj[];
      assert.equal(terms.length, 1);
      const term = terms[0]!.podAffinityTerm as Obj;
      assert.ok(terms[0]!.weight >= 1 && terms[0]!.weight <= 100);
      assert.equal(term.topologyKey, 'kubernetes.io/hostname');
      assert.equal(term.namespaces, undefined, 'its own namespace');
      assert.equal(term.labelSelector.matchExpressions, undefined);
      assert.deepEqual(term.labelSelector.matchLabels, dep.spec.selector.matchLabels);
      for (const [k, v] of Object.entries(term.labelSelector.matchLabels as Record<string, string>))
        assert.equal(dep.spec.template.metadata.labels[k], v, k);
    });

    it("PodDisruptionBudget: selects the Deployment's pods and allows at most one of them to be disrupted", () => {
      const pdbs = rendered.filter((d) => d.kind === 'PodDisruptionBudget');
      assert.equal(pdbs.length, 1);
      const pdb = pdbs[0]!;
      const d = rendered.find((x) => x.kind === 'Deployment')!;
      assert.equal(pdb.metadata.namespace, d.metadata.namespace);
      assert.equal(pdb.spec.selector.matchExpressions, undefined);
      assert.deepEqual(pdb.spec.selector.matchLabels, d.spec.selector.matchLabels);
      for (const [k, v] of Object.entries(pdb.spec.selector.matchLabels as Record<string, string>))
        assert.equal(d.spec.template.metadata.labels[k], v, k);
      const replicas = d.spec.replicas as number;
      assert.ok(replicas >= 2, 'a budget that allows one disruption needs a second replica');
      // Exactly one of the two fields; either way at most one replica goes at a time.
      if (pdb.spec.maxUnavailable !== undefined) {
        assert.equal(pdb.spec.minAvailable, undefined);
        assert.equal(pdb.spec.maxUnavailable, 1);
      } else {
        assert.equal(pdb.spec.minAvailable, replicas - 1);
      }
    });

    it('NetworkPolicy: none in any default install (nothing to get wrong before the API server address is known); the hardening component adds exactly one', async () => {
      for (const dir of ['config/no-policies', 'config/namespaced', 'config/report-only']) {
        assert.equal((await kustomize(dir)).filter((d) => d.kind === 'NetworkPolicy').length, 0, dir);
      }
      assert.equal(rendered.filter((d) => d.kind === 'NetworkPolicy').length, 0);
      assert.equal(withPolicy.filter((d) => d.kind === 'NetworkPolicy').length, 1);
      assert.deepEqual(
        withPolicy.filter((d) => d.kind !== 'NetworkPolicy'),
        rendered,
        'the component adds the policy and changes nothing else',
      );
    });

    it('NetworkPolicy (hardened): ingress only from the monitoring namespace and only to the metrics port 8080; egress only to ipBlocks on 443/6443; no DNS rule', () => {
      const nps = withPolicy.filter((d) => d.kind === 'NetworkPolicy');
      assert.equal(nps.length, 1);
      const np = nps[0]!;
      const d = withPolicy.find((x) => x.kind === 'Deployment')!;
      assert.deepEqual(np.spec.podSelector, { matchLabels: d.spec.template.metadata.labels });
      assert.deepEqual([...(np.spec.policyTypes as string[])].sort(), ['Egress', 'Ingress']);
      const portsOf = (rules: Obj[]): string[] =>
        rules.flatMap((r) => ((r.ports ?? []) as Obj[]).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`)).sort();

      const ingress = np.spec.ingress as Obj[];
      assert.ok(ingress.length >= 1);
      for (const r of ingress) {
        // A rule without `from` (or with an empty one) admits every source.
        assert.ok(Array.isArray(r.from) && r.from.length > 0, `ingress rule without from: ${JSON.stringify(r)}`);
        for (const peer of r.from as Obj[]) {
          assert.equal(peer.ipBlock, undefined, JSON.stringify(peer));
          assert.deepEqual(peer.namespaceSelector, { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } });
        }
        // A rule without ports opens every port.
        assert.ok(Array.isArray(r.ports) && r.ports.length > 0, `ingress rule without ports: ${JSON.stringify(r)}`);
      }
      assert.deepEqual(portsOf(ingress), ['TCP/8080']);
      const metrics = ((d.spec.template.spec.containers as Obj[])[0]!.ports as Obj[]).find((p) => p.name === 'metrics');
      assert.equal(metrics?.containerPort, 8080, 'the rule opens the metrics port');

      const egress = np.spec.egress as Obj[];
      assert.ok(egress.length >= 1);
      for (const r of egress) {
        // A rule without `to` (or with an empty one) allows every destination.
        assert.ok(Array.isArray(r.to) && r.to.length > 0, `egress rule open to all destinations: ${JSON.stringify(r)}`);
        for (const peer of r.to as Obj[]) {
          assert.deepEqual(Object.keys(peer), ['ipBlock'], `only ipBlocks: ${JSON.stringify(peer)}`);
          assert.ok(!['0.0.0.0/0', '::/0'].includes(peer.ipBlock.cidr as string), `open to all addresses: ${peer.ipBlock.cidr}`);
        }
        assert.ok(Array.isArray(r.ports) && r.ports.length > 0, `egress rule without ports: ${JSON.stringify(r)}`);
      }
      assert.deepEqual(portsOf(egress), ['TCP/443', 'TCP/6443']);
      // No DNS: the operator connects to KUBERNETES_SERVICE_HOST, an IP address.
      assert.ok(!portsOf(egress).some((p) => p.endsWith('/53')), 'no DNS rule');
      const env = ((d.spec.template.spec.containers as Obj[])[0]!.env ?? []) as Obj[];
      assert.ok(!env.some((e) => e.name === 'KUBECONFIG'), 'in-cluster config: the API server is KUBERNETES_SERVICE_HOST');
    });
  });

  describe('deploy/ hardened with its NetworkPolicy, and the PodDisruptionBudget, accepted by the API server (kubectl apply --dry-run=server)', () => {
    let ns: string;
    let rendered: Obj[];

    const overlay = hardened;

    /** `kubectl apply --dry-run=server` of `objs` moved into our namespace: the API server validates them and stores nothing. */
    async function dryRun(objs: readonly Obj[]): Promise<string> {
      const items = objs.map((o) => ({ ...structuredClone(o), metadata: { ...o.metadata, namespace: ns } }));
      const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
        allowFail: true,
      });
      assert.equal(res.code, 0, res.stderr);
      return res.stdout;
    }

    const pick = (docs: readonly Obj[], kind: string): Obj => {
      const found = docs.filter((d) => d.kind === kind);
      assert.equal(found.length, 1, kind);
      return found[0]!;
    };

    before(async () => {
      rendered = await hardened();
      ns = uniqueName('sec-np');
      cleanups.push(async () => {
        await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
      });
      await createNamespaceIn(kubectl, ns);
    });

    it('the rendered NetworkPolicy and PodDisruptionBudget are accepted, and nothing is stored', async () => {
      const out = await dryRun([pick(rendered, 'NetworkPolicy'), pick(rendered, 'PodDisruptionBudget')]);
      assert.match(out, /networkpolicy\.networking\.k8s\.io\/rollout-guard created \(server dry run\)/);
      assert.match(out, /poddisruptionbudget\.policy\/rollout-guard created \(server dry run\)/);
      const left = await kubectl(['get', 'networkpolicy,poddisruptionbudget', '-o', 'name'], { ns });
      assert.equal(left.stdout.trim(), '');
    });

    it('the API server address and the monitoring namespace are each one patch line, and the patched policy is accepted', async () => {
      // The lines docs/install.md ("NetworkPolicy") gives a user's kustomization.yaml.
      const docs = await overlay([
        `{target: {kind: NetworkPolicy, name: rollout-guard}, patch: '[{"op": "replace", "path": "/spec/egress/0/to/0/ipBlock/cidr", "value": "10.0.0.10/32"}]'}`,
        `{target: {kind: NetworkPolicy, name: rollout-guard}, patch: '[{"op": "replace", "path": "/spec/ingress/0/from/0/namespaceSelector/matchLabels", "value": {"kubernetes.io/metadata.name": "observability"}}]'}`,
      ]);
      const np = pick(docs, 'NetworkPolicy');
      assert.deepEqual(np.spec.egress[0].to, [{ ipBlock: { cidr: '10.0.0.10/32' } }]);
      assert.deepEqual(np.spec.ingress[0].from, [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } },
      ]);
      // Everything else as rendered.
      const rest = (o: Obj): Obj => {
        const spec = o.spec as Obj;
        return {
          ...spec,
          egress: (spec.egress as Obj[]).map((r) => r.ports as unknown),
          ingress: (spec.ingress as Obj[]).map((r) => r.ports as unknown),
        };
      };
      assert.deepEqual(rest(np), rest(pick(rendered, 'NetworkPolicy')));
      await dryRun([np]);
    });

    it('several API server addresses (one per control-plane node): one patch line replacing the list', async () => {
      const docs = await overlay([
        `{target: {kind: NetworkPolicy, name: rollout-guard}, patch: '[{"op": "replace", "path": "/spec/egress/0/to", "value": [{"ipBlock": {"cidr": "10.0.0.10/32"}}, {"ipBlock": {"cidr": "10.0.0.11/32"}}, {"ipBlock": {"cidr": "10.0.0.12/32"}}]}]'}`,
      ]);
      const np = pick(docs, 'NetworkPolicy');
      assert.deepEqual(
        (np.spec.egress[0].to as Obj[]).map((p) => p.ipBlock.cidr as string),
        ['10.0.0.10/32', '10.0.0.11/32', '10.0.0.12/32'],
      );
      await dryRun([np]);
    });

    it('negative control: the API server refuses a NetworkPolicy whose ipBlock is not a CIDR', async () => {
      const np = structuredClone(pick(rendered, 'NetworkPolicy'));
      np.spec.egress[0].to = [{ ipBlock: { cidr: 'kubernetes.default.svc' } }];
      const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
        input: JSON.stringify({ ...np, metadata: { ...np.metadata, namespace: ns } }),
        allowFail: true,
      });
      assert.notEqual(res.code, 0, 'accepted: the dry run would not catch a broken policy');
      assert.match(res.stderr, /ipBlock\.cidr|cidr/i);
    });
  });
});
