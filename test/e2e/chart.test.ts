/**
 * End to end: the Helm chart in charts/rollout-guard, with the pinned helm (built from Go modules by
 * cluster/build.sh) and the real API server.
 *
 * 1. `helm lint --strict` passes with the defaults and with every non-default combination the chart
 *    supports (namespaced, report-only, no-policies, secure metrics, monitoring on, and mixes).
 * 2. values.schema.json refuses bad values at `helm template`, `helm lint` and `helm install`, naming the
 *    value and the rule; it is draft-07 with `additionalProperties: false` on every object.
 * 3. The chart renders what kustomize renders: `helm template` against `kubectl kustomize` of deploy/,
 *    config/namespaced, config/report-only and config/no-policies, object by object, after stripping
 *    Helm's standard labels and deploy/'s Namespace (the chart installs into the release namespace). The
 *    differences that remain are listed in EXPECTED, each with its reason; any other difference fails.
 *    files/crds/ (rendered by templates/crds.yaml) must be byte-identical to config/crd, the rendered CRDs
 *    equal to it in content, and the chart's appVersion package.json's version. Each value renders where
 *    it belongs; two releases with different names share no object name.
 * 4. The API server accepts the rendered chart (`kubectl apply --dry-run=server`, nothing stored): the
 *    defaults in a namespace warning on the Pod Security `restricted` profile (no warning allowed), the
 *    namespaced mode, and the monitoring objects against the prometheus-operator CRDs (PodMonitor,
 *    PrometheusRule) from the Go module github.com/prometheus-operator/prometheus-operator, fetched once
 *    into the tools cache beside the pinned binaries and installed for real (cluster-wide, left in place
 *    for other suites, like config/crd).
 * 5. The chart's RBAC is installed and asked `kubectl auth can-i`, as test/e2e/security.test.ts asks
 *    config/rbac and config/namespaced: rendered into unique namespaces (the release namespace and, in
 *    namespaced mode, the watched ones), with a unique suffix on cluster-scoped names so that concurrent
 *    suites cannot collide with the copies; deleted afterwards. The question lists are security.test.ts's
 *    (both from test/support/rbac.ts).
 * 6. A release of the previous layout (CRDs in crds/, which Helm never upgrades) is upgraded for real: the
 *    CRDs adopted with the documented kubectl commands, upgraded by `helm upgrade`, and kept, with a guard,
 *    by `helm uninstall`. The CRDs are copies under a unique API group, so the suites that use the real
 *    ones never see an older schema.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, copyFile, cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { waitForCrdsEstablished } from '../../cluster/kubectl.js';
import { binDir, createNamespaceIn, ensureCluster, kubeconfigPath, kubectl, uniqueName, waitFor } from '../support/cluster.js';
import { ROOT, apply } from '../support/operator.js';
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

const CHART = resolve(ROOT, 'charts/rollout-guard');
/** The labels every templated object carries and the kustomize installs do not. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];
/** Label on every cluster-scoped object this suite creates, for cleanup. */
const TEST_LABEL = 'rollout-guard.dev/chart-test';
/** The prometheus-operator release whose CRDs validate the monitoring objects. */
const PROMETHEUS_OPERATOR_MODULE = 'github.com/prometheus-operator/prometheus-operator';
const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';
const MONITORING_CRDS = [
  'monitoring.coreos.com_podmonitors.yaml',
  'monitoring.coreos.com_prometheusrules.yaml',
  'monitoring.coreos.com_servicemonitors.yaml',
];
/** Helm's annotation that keeps an object at `helm uninstall` (crds.keep). */
const KEEP = 'helm.sh/resource-policy';

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/** The pinned helm, against the test cluster. */
function helm(args: readonly string[]): Promise<RunResult> {
  return run(join(binDir(), 'helm'), args, { env: { ...process.env, KUBECONFIG: kubeconfigPath() } });
}

const docsOf = (yaml: string): Obj[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null && typeof d === 'object');

/** `helm template` of `chart` into `ns` as `release` (default rollout-guard); fails the test on a non-zero exit. */
async function template(values: readonly string[], opts: { ns?: string; chart?: string; release?: string } = {}): Promise<Obj[]> {
  const res = await helm(['template', opts.release ?? 'rollout-guard', opts.chart ?? CHART, '-n', opts.ns ?? INSTALL_NS, ...values]);
  assert.equal(res.code, 0, `helm template ${values.join(' ')}: ${res.stderr}`);
  return docsOf(res.stdout);
}

async function kustomize(dir: string): Promise<Obj[]> {
  const { stdout } = await kubectl(['kustomize', resolve(ROOT, dir)]);
  return docsOf(stdout);
}

const key = (d: Obj): string => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;

function pick(docs: readonly Obj[], kind: string, name?: string): Obj {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind}${name ? `/${name}` : ''}: ${docs.map(key).join(', ')}`);
  return found[0]!;
}

const container = (docs: readonly Obj[]): Obj => (pick(docs, 'Deployment').spec.template.spec.containers as Obj[])[0]!;
const envOf = (docs: readonly Obj[], name: string): string | undefined =>
  ((container(docs).env ?? []) as Obj[]).find((e) => e.name === name)?.value as string | undefined;

/**
 * An object as the comparison sees it: without Helm's standard labels (on the object and on a pod
 * template; a labels map left empty goes too) and the CRDs' keep annotation (Helm's, as the labels), and
 * with the container env sorted by name. Kustomize's
 * strategic merge puts the entries a patch adds first (WATCH_NAMESPACES, ENABLE_POLICIES), the chart
 * keeps one order; no value refers to another ($(VAR)), so the order has no meaning (asserted).
 */
function normalize(d: Obj): Obj {
  const o = structuredClone(d);
  const strip = (meta: Obj | undefined): void => {
    if (!meta?.labels) return;
    for (const l of HELM_LABELS) delete meta.labels[l];
    if (Object.keys(meta.labels as Obj).length === 0) delete meta.labels;
  };
  strip(o.metadata as Obj);
  if (o.metadata.annotations) {
    delete o.metadata.annotations[KEEP];
    if (Object.keys(o.metadata.annotations as Obj).length === 0) delete o.metadata.annotations;
  }
  const pod = o.spec?.template as Obj | undefined;
  if (pod?.metadata) strip(pod.metadata as Obj);
  for (const c of (pod?.spec?.containers ?? []) as Obj[]) {
    if (!c.env) continue;
    for (const e of c.env as Obj[])
      assert.ok(!String(e.value ?? '').includes('$('), `${key(d)}: env ${e.name} refers to another variable, so order matters`);
    c.env = [...(c.env as Obj[])].sort((a, b) => String(a.name).localeCompare(String(b.name)));
  }
  return o;
}

/** The JSON paths at which `a` and `b` differ. */
function diffPaths(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (isObj(a) && isObj(b))
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().flatMap((k) => diffPaths(a[k], b[k], `${path}/${k}`));
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((x, i) => diffPaths(x, b[i], `${path}/${i}`));
  return [path || '/'];
}

/** Every difference between the chart's rendering and a kustomize install, one line each. */
function differences(chart: readonly Obj[], kustomized: readonly Obj[], dir: string): string[] {
  const ours = new Map(chart.map((d) => [key(d), normalize(d)]));
  const theirs = new Map(kustomized.filter((d) => d.kind !== 'Namespace').map((d) => [key(d), normalize(d)]));
  assert.equal(ours.size, chart.length, 'no two chart objects share kind, namespace and name');
  const out: string[] = [];
  for (const k of [...new Set([...ours.keys(), ...theirs.keys()])].sort()) {
    const a = ours.get(k);
    const b = theirs.get(k);
    if (!a) out.push(`${k}: only in ${dir}`);
    else if (!b) out.push(`${k}: only in the chart`);
    else for (const p of diffPaths(a, b)) out.push(`${k} ${p}: differs`);
  }
  return out;
}

/** Each kustomize install, the values that make the chart render it, and every difference left, with its reason. */
const EXPECTED: ReadonlyArray<{ mode: string; dir: string; values: string[]; differences: string[] }> = [
  { mode: 'defaults', dir: 'deploy', values: [], differences: [] },
  // config/namespaced's example namespaces.
  { mode: 'namespaced', dir: 'config/namespaced', values: ['--set', 'watchNamespaces={team-a,team-b}'], differences: [] },
  {
    mode: 'report-only',
    dir: 'config/report-only',
    values: ['--set', 'undo.enabled=false'],
    // config/report-only deletes only the binding and leaves the ClusterRole, which unbound grants nothing.
    // The chart renders a role only together with its binding, so that no object of a report-only release
    // names `patch daemonsets`.
    differences: ['ClusterRole//rollout-guard-undo: only in config/report-only'],
  },
  {
    mode: 'no-policies',
    dir: 'config/no-policies',
    values: ['--set', 'policies.enabled=false'],
    // The same rule: config/no-policies leaves the unbound ClusterRole, the chart leaves out role and binding.
    differences: ['ClusterRole//rollout-guard-policies: only in config/no-policies'],
  },
];

/** One value of each kind a platform team sets on day one (docs/install.md, "Install with Helm"). */
const DIGEST = `sha256:${'ab'.repeat(32)}`;
const DAY_ONE: readonly string[] = [
  '--set',
  `image.digest=${DIGEST},priorityClassName=system-cluster-critical`,
  '--set-json',
  'imagePullSecrets=[{"name":"regcred"}]',
  '--set-json',
  'podLabels={"team":"platform"}',
  '--set-json',
  'podAnnotations={"prometheus.io/scrape":"false"}',
  '--set-json',
  'nodeSelector={"node-role.kubernetes.io/infra":""}',
  '--set-json',
  'tolerations=[{"key":"dedicated","operator":"Equal","value":"infra","effect":"NoSchedule"}]',
  '--set-json',
  'topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app.kubernetes.io/name":"rollout-guard"}}}]',
  '--set-json',
  'extraArgs=["--workers=4","--idle-collect-after-ms=60000"]',
  '--set-json',
  'extraEnv=[{"name":"NODE_OPTIONS","value":"--max-old-space-size=400"}]',
  '--set-json',
  'serviceAccount={"annotations":{"iam.gke.io/gcp-service-account":"rg@p.iam.gserviceaccount.com"}}',
  '--set-json',
  'monitoring={"podMonitor":{"enabled":true,"labels":{"release":"kube-prometheus-stack"}},"prometheusRule":{"enabled":true,"labels":{"release":"kube-prometheus-stack"}}}',
];

/** Every non-default combination the chart supports, for `helm lint --strict`. */
const COMBINATIONS: ReadonlyArray<readonly string[]> = [
  ['--set', 'watchNamespaces={team-a,team-b}'],
  ['--set', 'undo.enabled=false'],
  ['--set', 'policies.enabled=false'],
  ['--set', 'metrics.secure=true'],
  ['--set', 'monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true'],
  ['--set', 'watchNamespaces={team-a},undo.enabled=false'],
  ['--set', 'undo.enabled=false,policies.enabled=false,metrics.secure=true,monitoring.prometheusRule.enabled=true'],
  ['--set', 'watchNamespaces={team-a,team-b},metrics.secure=true,networkPolicy.enabled=true,replicaCount=1'],
  [
    '--set',
    'replicaCount=3,logLevel=debug,image.repository=registry.example.com:5000/team/rollout-guard,image.tag=0.1.0-rc.1,image.pullPolicy=Always',
  ],
  DAY_ONE,
  [
    '--set-json',
    'affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}',
  ],
  [
    '--set',
    'networkPolicy.enabled=true,networkPolicy.apiServerCIDRs={10.0.0.10/32,10.0.0.11/32,fd00::10/128}',
    '--set-json',
    'networkPolicy.metricsFromNamespaceSelector={"matchExpressions":[{"key":"team","operator":"In","values":["observability"]}]}',
  ],
  ['--set', 'crds.enabled=false'],
  ['--set', 'crds.keep=false'],
  ['--set', 'nameOverride=rg-blue,fullnameOverride=blue'],
  ['--set', 'serviceAccount.create=false,serviceAccount.name=platform-sa'],
  ['--set', 'monitoring.serviceMonitor.enabled=true,monitoring.serviceMonitor.interval=30s,metrics.secure=true'],
];

/** A chart copy in a temporary directory, with `files/prometheus-rules.yaml` as given (absent for undefined). */
async function chartCopy(rules: string | undefined): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const tmp = await mkdtemp(join(tmpdir(), 'rg-chart-'));
  const dir = join(tmp, 'rollout-guard');
  await cp(CHART, dir, { recursive: true });
  await rm(join(dir, 'files/prometheus-rules.yaml'), { force: true });
  if (rules !== undefined) {
    await mkdir(join(dir, 'files'), { recursive: true });
    await writeFile(join(dir, 'files/prometheus-rules.yaml'), rules);
  }
  return { dir, cleanup: () => rm(tmp, { recursive: true, force: true }) };
}

/** A recording rule, a test fixture only: the chart's alert rules are not this suite's to write. */
const FIXTURE_RULES = 'groups:\n  - name: chart-test-fixture\n    rules:\n      - record: chart_test:fixture\n        expr: vector(1)\n';

/** The CRD files of a directory (config/crd, the chart's files/crds), sorted, without the kustomization. */
const crdFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();

/** config/crd's CRDs, parsed, by name. */
async function configCrds(): Promise<Map<string, Obj>> {
  const dir = resolve(ROOT, 'config/crd');
  const docs = await Promise.all((await crdFiles(dir)).map(async (f) => parseYaml(await readFile(join(dir, f), 'utf8')) as Obj));
  return new Map(docs.map((d) => [d.metadata.name as string, d]));
}

/**
 * Whether `actual` holds everything `expected` holds: the API server adds defaults and status to what it
 * stores, so a stored CRD is compared as a superset of its file (arrays element by element, same length).
 */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => contains(actual[i], e));
  if (typeof expected === 'object' && expected !== null)
    return (
      typeof actual === 'object' && actual !== null && Object.entries(expected as Obj).every(([k, v]) => contains((actual as Obj)[k], v))
    );
  return isDeepStrictEqual(actual, expected);
}

/** Cluster-scoped kinds the chart renders: the names two releases must not share. */
const CLUSTER_KINDS: ReadonlySet<string> = new Set(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

// ---------------------------------------------------------------------------------------------
// RBAC questions: the same lists as test/e2e/security.test.ts, from test/support/rbac.ts.

/**
 * The RBAC objects of a rendering, with a unique suffix on cluster-scoped names and ClusterRole
 * references and a cleanup label. The chart was rendered into unique namespaces, so namespaced objects
 * and ServiceAccount subjects stay as rendered; `namespaces` lists the only namespaces they may name.
 */
function relocate(docs: readonly Obj[], suffix: string, namespaces: readonly string[]): Obj[] {
  return relocateRbac(docs, TEST_LABEL, suffix, {
    namespace: (o) => {
      assert.ok(namespaces.includes(o.metadata.namespace as string), `${key(o)} outside ${namespaces.join(', ')}`);
      return o.metadata.namespace as string;
    },
    subject: (s, o) => assert.deepEqual(s, { kind: 'ServiceAccount', name: 'rollout-guard', namespace: namespaces[0] }, key(o)),
  });
}

// ---------------------------------------------------------------------------------------------

describe('Helm chart', () => {
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    await ensureCluster();
    const v = await helm(['version', '--short']);
    assert.equal(v.code, 0, `helm in ${binDir()}: ${v.stderr}`);
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  describe('helm lint --strict', () => {
    it('passes with the default values', async () => {
      const res = await helm(['lint', '--strict', CHART]);
      assert.equal(res.code, 0, res.stdout + res.stderr);
      assert.match(res.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(res.stdout, /\[(WARNING|ERROR)\]/);
    });

    for (const values of COMBINATIONS) {
      it(`passes with ${values.filter((v) => !v.startsWith('--')).join(' ')}`, async () => {
        const res = await helm(['lint', '--strict', CHART, ...values]);
        assert.equal(res.code, 0, res.stdout + res.stderr);
        assert.doesNotMatch(res.stdout, /\[(WARNING|ERROR)\]/);
      });
    }
  });

  describe('values.schema.json refuses bad values', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rg-chart-values-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
    });

    /** Each bad values file and the message it must produce (Helm prints the value's path and the rule). */
    const BAD: ReadonlyArray<{ name: string; yaml: string; message: RegExp }> = [
      { name: 'an unknown key at the top level', yaml: 'replicas: 3\n', message: /at '': additional properties 'replicas' not allowed/ },
      { name: 'replicaCount: -1', yaml: 'replicaCount: -1\n', message: /at '\/replicaCount': minimum: got -1, want 1/ },
      { name: 'replicaCount: 1.5', yaml: 'replicaCount: 1.5\n', message: /at '\/replicaCount': got number, want integer/ },
      {
        name: 'watchNamespaces: "team-a" (a string, not a list)',
        yaml: 'watchNamespaces: "team-a"\n',
        message: /at '\/watchNamespaces': got string, want array/,
      },
      {
        name: 'watchNamespaces with a name that is not a namespace',
        yaml: 'watchNamespaces: [Team_A]\n',
        message: /at '\/watchNamespaces\/0': 'Team_A' does not match pattern/,
      },
      {
        name: 'watchNamespaces with a duplicate',
        yaml: 'watchNamespaces: [team-a, team-a]\n',
        message: /at '\/watchNamespaces': items at 0 and 1 are equal/,
      },
      {
        name: 'networkPolicy.apiServerCIDRs: ["not-a-cidr"]',
        yaml: 'networkPolicy:\n  apiServerCIDRs: ["not-a-cidr"]\n',
        message: /at '\/networkPolicy\/apiServerCIDRs\/0': 'not-a-cidr' does not match pattern/,
      },
      {
        name: 'networkPolicy.apiServerCIDRs: ["10.0.0.1"] (no prefix length)',
        yaml: 'networkPolicy:\n  apiServerCIDRs: ["10.0.0.1"]\n',
        message: /at '\/networkPolicy\/apiServerCIDRs\/0': '10\.0\.0\.1' does not match pattern/,
      },
      {
        name: 'networkPolicy.apiServerCIDRs: ["0.0.0.0/0"] (every address)',
        yaml: 'networkPolicy:\n  apiServerCIDRs: ["0.0.0.0/0"]\n',
        message: /at '\/networkPolicy\/apiServerCIDRs\/0': '0\.0\.0\.0\/0' does not match pattern/,
      },
      {
        name: 'networkPolicy.apiServerCIDRs: [] (an egress rule without peers allows every destination)',
        yaml: 'networkPolicy:\n  apiServerCIDRs: []\n',
        message: /at '\/networkPolicy\/apiServerCIDRs': minItems: got 0, want 1/,
      },
      {
        name: 'image.pullPolicy: Sometimes',
        yaml: 'image:\n  pullPolicy: Sometimes\n',
        message: /at '\/image\/pullPolicy': value must be one of '', 'Always', 'IfNotPresent', 'Never'/,
      },
      {
        name: 'logLevel: verbose',
        yaml: 'logLevel: verbose\n',
        message: /at '\/logLevel': value must be one of 'fatal', 'error', 'warn', 'info', 'debug', 'trace'/,
      },
      {
        name: 'a misspelt key in podSecurityContext',
        yaml: 'podSecurityContext:\n  runAsNonroot: true\n',
        message: /at '\/podSecurityContext': additional properties 'runAsNonroot' not allowed/,
      },
      {
        name: 'undo.enabled: "no" (a string)',
        yaml: 'undo:\n  enabled: "no"\n',
        message: /at '\/undo\/enabled': got string, want boolean/,
      },
      {
        name: 'undo.enabled: null (removing a required switch)',
        yaml: 'undo:\n  enabled: null\n',
        message: /at '\/undo': missing property 'enabled'/,
      },
      {
        name: 'resources.requests.cpu: lots',
        yaml: 'resources:\n  requests:\n    cpu: lots\n',
        message: /at '\/resources\/requests\/cpu': 'lots' does not match pattern/,
      },
      {
        name: 'metrics.certSecretName that is not a Secret name',
        yaml: 'metrics:\n  certSecretName: "My Secret"\n',
        message: /at '\/metrics\/certSecretName': 'My Secret' does not match pattern/,
      },
      {
        name: 'monitoring.podMonitor.enabled with metrics.secure',
        yaml: 'metrics:\n  secure: true\nmonitoring:\n  podMonitor:\n    enabled: true\n',
        message: /at '\/monitoring\/podMonitor\/enabled': value must be false/,
      },
      {
        name: 'image.digest that is not a sha256 digest',
        yaml: 'image:\n  digest: latest\n',
        message: /at '\/image\/digest': 'latest' does not match pattern/,
      },
      {
        name: 'extraArgs with something that is not a flag',
        yaml: 'extraArgs: [run]\n',
        message: /at '\/extraArgs\/0': 'run' does not match pattern/,
      },
      {
        name: 'imagePullSecrets without a name',
        yaml: 'imagePullSecrets: [{secret: regcred}]\n',
        message: /at '\/imagePullSecrets\/0': (missing property 'name'|additional properties 'secret' not allowed)/,
      },
      {
        name: 'podLabels with a value that is not a string',
        yaml: 'podLabels:\n  tier: 1\n',
        message: /at '\/podLabels\/tier': got number, want string/,
      },
      {
        name: 'a toleration with operator Equals',
        yaml: 'tolerations: [{key: dedicated, operator: Equals}]\n',
        message: /at '\/tolerations\/0\/operator': value must be one of 'Exists', 'Equal'/,
      },
      {
        name: 'a misspelt affinity kind',
        yaml: 'affinity:\n  nodeAffinty: {}\n',
        message: /at '\/affinity': additional properties 'nodeAffinty' not allowed/,
      },
      {
        name: 'a spread constraint without whenUnsatisfiable',
        yaml: 'topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone}]\n',
        message: /at '\/topologySpreadConstraints\/0': missing property 'whenUnsatisfiable'/,
      },
      {
        name: 'a misspelt key in serviceAccount',
        yaml: 'serviceAccount:\n  annotation: {}\n',
        message: /at '\/serviceAccount': additional properties 'annotation' not allowed/,
      },
      {
        name: 'crds.enabled: "yes" (a string)',
        yaml: 'crds:\n  enabled: "yes"\n',
        message: /at '\/crds\/enabled': got string, want boolean/,
      },
      {
        name: 'crds.keep: null (removing a required switch)',
        yaml: 'crds:\n  keep: null\n',
        message: /at '\/crds': missing property 'keep'/,
      },
      {
        name: 'fullnameOverride that is not a DNS label',
        yaml: 'fullnameOverride: Team_A\n',
        message: /at '\/fullnameOverride': 'Team_A' does not match pattern/,
      },
      {
        name: 'serviceAccount.create: "false" (a string)',
        yaml: 'serviceAccount:\n  create: "false"\n',
        message: /at '\/serviceAccount\/create': got string, want boolean/,
      },
      {
        name: 'monitoring.serviceMonitor.interval: often',
        yaml: 'monitoring:\n  serviceMonitor:\n    interval: often\n',
        message: /at '\/monitoring\/serviceMonitor\/interval': 'often' does not match pattern/,
      },
      {
        name: 'a bad operator in metricsFromNamespaceSelector',
        yaml: 'networkPolicy:\n  metricsFromNamespaceSelector:\n    matchExpressions: [{key: team, operator: Is}]\n',
        message:
          /at '\/networkPolicy\/metricsFromNamespaceSelector\/matchExpressions\/0\/operator': value must be one of 'In', 'NotIn', 'Exists', 'DoesNotExist'/,
      },
    ];

    for (const bad of BAD) {
      it(`${bad.name}: refused by helm template and helm lint --strict`, async () => {
        const file = join(dir, `${uniqueName('values')}.yaml`);
        await writeFile(file, bad.yaml);
        const t = await helm(['template', 'rollout-guard', CHART, '-f', file]);
        assert.notEqual(t.code, 0, `accepted:\n${t.stdout.slice(0, 400)}`);
        assert.match(t.stderr, /values don't meet the specifications of the schema\(s\) in the following chart\(s\):\nrollout-guard:/);
        assert.match(t.stderr, bad.message);
        assert.equal(t.stdout, '', 'nothing rendered');
        const l = await helm(['lint', '--strict', CHART, '-f', file]);
        assert.notEqual(l.code, 0, l.stdout);
        assert.match(l.stdout, bad.message);
      });
    }

    it('helm install refuses bad values before it creates anything', async () => {
      const ns = uniqueName('chart-bad');
      cleanups.push(async () => {
        await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
      });
      const res = await helm(['install', 'rollout-guard', CHART, '-n', ns, '--create-namespace', '--set', 'replicaCount=-1']);
      assert.notEqual(res.code, 0, res.stdout);
      assert.match(res.stderr, /at '\/replicaCount': minimum: got -1, want 1/);
      const ls = await helm(['list', '-n', ns, '-a', '-q']);
      assert.equal(ls.stdout.trim(), '', 'no release recorded');
      const got = await kubectl(['get', 'namespace', ns], { allowFail: true });
      assert.notEqual(got.code, 0, 'the release namespace was not even created');
    });

    it('statically: draft-07, and `additionalProperties: false` on every object of the schema', async () => {
      const schema = JSON.parse(await readFile(join(CHART, 'values.schema.json'), 'utf8')) as Obj;
      assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
      const open: string[] = [];
      let objects = 0;
      const walk = (node: unknown, path: string): void => {
        if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}/${i}`));
        if (typeof node !== 'object' || node === null) return;
        const n = node as Obj;
        const types = ([] as unknown[]).concat(n.type ?? []);
        if (types.includes('object') || n.properties || n.patternProperties) {
          objects++;
          if (n.additionalProperties !== false) open.push(path || '/');
        }
        for (const [k, v] of Object.entries(n)) if (k !== 'if' && k !== 'then' && k !== 'enum' && k !== 'const') walk(v, `${path}/${k}`);
      };
      walk(schema, '');
      assert.ok(objects >= 20, `found the objects (${objects})`);
      assert.deepEqual(open, [], 'objects that accept unknown keys');
      // Every key of values.yaml is described by the schema (and the defaults pass it: helm lint above).
      const values = parseYaml(await readFile(join(CHART, 'values.yaml'), 'utf8')) as Obj;
      assert.deepEqual(Object.keys(values).sort(), Object.keys(schema.properties as Obj).sort());
    });
  });

  describe('helm template renders what kustomize renders', { concurrency: 4 }, () => {
    for (const m of EXPECTED) {
      it(`${m.mode} (${m.values.join(' ') || 'no values'}) = kubectl kustomize ${m.dir}, except ${m.differences.length} listed difference(s)`, async () => {
        const [chart, kustomized] = await Promise.all([template(m.values), kustomize(m.dir)]);
        assert.ok(chart.length >= 10, `rendered objects: ${chart.length}`);
        assert.ok(
          chart.some((d) => d.kind === 'CustomResourceDefinition'),
          'the CRDs are templates now',
        );
        assert.deepEqual(differences(chart, kustomized, m.dir), m.differences);
        // Every object carries Helm's standard labels, the CRDs included.
        for (const d of chart) {
          for (const l of HELM_LABELS) assert.ok(d.metadata.labels?.[l], `${key(d)}: ${l}`);
          assert.equal(d.metadata.labels['app.kubernetes.io/instance'], 'rollout-guard');
        }
      });
    }

    it('files/crds/ is byte-identical to config/crd (the same files, the same bytes), and the chart has no crds/', async () => {
      const theirs = await crdFiles(resolve(ROOT, 'config/crd'));
      const ours = await crdFiles(join(CHART, 'files/crds'));
      assert.deepEqual(ours, theirs);
      assert.ok(theirs.length >= 2);
      for (const f of theirs) {
        const a = await readFile(join(CHART, 'files/crds', f));
        const b = await readFile(resolve(ROOT, 'config/crd', f));
        assert.ok(a.equals(b), `charts/rollout-guard/files/crds/${f} differs from config/crd/${f}: copy it again`);
      }
      await assert.rejects(access(join(CHART, 'crds')), 'crds/ is gone: Helm would install it besides the templates and never upgrade it');
      // config/crd's kustomization lists exactly these files.
      const k = parseYaml(await readFile(resolve(ROOT, 'config/crd/kustomization.yaml'), 'utf8')) as Obj;
      assert.deepEqual([...(k.resources as string[])].sort(), theirs);
    });

    it("the chart's appVersion is package.json's version, and the default image tag follows it", async () => {
      const chart = parseYaml(await readFile(join(CHART, 'Chart.yaml'), 'utf8')) as Obj;
      const pkg = JSON.parse(await readFile(resolve(ROOT, 'package.json'), 'utf8')) as Obj;
      assert.equal(chart.apiVersion, 'v2');
      assert.equal(chart.appVersion, pkg.version);
      assert.equal(container(await template([])).image, `rollout-guard:${pkg.version as string}`);
      assert.equal(container(await template(['--set', 'image.tag=9.9.9,image.repository=r.example/rg'])).image, 'r.example/rg:9.9.9');
    });

    it('namespaced mode: policies are off even with policies.enabled; report-only namespaced has no undo Role; the Lease Role stays in the release namespace', async () => {
      const docs = await template(['--set', 'watchNamespaces={w1,w2},policies.enabled=true,undo.enabled=false'], { ns: 'ops' });
      assert.equal(envOf(docs, 'ENABLE_POLICIES'), 'false');
      assert.equal(envOf(docs, 'WATCH_NAMESPACES'), 'w1,w2');
      const rbac = docs
        .filter((d) => RBAC_KINDS.has(d.kind as string))
        .map(key)
        .sort();
      assert.deepEqual(rbac, [
        'ClusterRole//rollout-guard-nodes',
        'ClusterRoleBinding//rollout-guard-nodes',
        'Role/ops/rollout-guard-leader-election',
        'Role/w1/rollout-guard',
        'Role/w2/rollout-guard',
        'RoleBinding/ops/rollout-guard-leader-election',
        'RoleBinding/w1/rollout-guard',
        'RoleBinding/w2/rollout-guard',
        'ServiceAccount/ops/rollout-guard',
      ]);
      for (const d of docs)
        for (const s of (d.subjects ?? []) as Obj[])
          assert.deepEqual(s, { kind: 'ServiceAccount', name: 'rollout-guard', namespace: 'ops' }, key(d));
      const patchesDaemonSets = docs.filter((d) =>
        ((d.rules ?? []) as Obj[]).some(
          (r) => ((r.resources ?? []) as string[]).includes('daemonsets') && (r.verbs as string[]).includes('patch'),
        ),
      );
      assert.deepEqual(patchesDaemonSets.map(key), [], 'report-only: no role names patch daemonsets');
    });

    it('replicaCount: a PodDisruptionBudget (maxUnavailable 1) from two replicas on, none for one', async () => {
      const three = await template(['--set', 'replicaCount=3']);
      assert.equal(pick(three, 'Deployment').spec.replicas, 3);
      assert.equal(pick(three, 'PodDisruptionBudget').spec.maxUnavailable, 1);
      const one = await template(['--set', 'replicaCount=1']);
      assert.equal(pick(one, 'Deployment').spec.replicas, 1);
      assert.equal(one.filter((d) => d.kind === 'PodDisruptionBudget').length, 0);
      assert.ok(pick(one, 'Deployment').spec.template.spec.affinity.podAntiAffinity, 'anti-affinity stays');
    });

    it('networkPolicy: none by default; enabled, every CIDR an ipBlock and the metrics namespace selector as given', async () => {
      assert.equal(
        (await template([])).filter((d) => d.kind === 'NetworkPolicy').length,
        0,
        'a default install has no policy to get wrong',
      );
      const docs = await template([
        '--set',
        'networkPolicy.enabled=true,networkPolicy.apiServerCIDRs={10.0.0.10/32,10.0.0.11/32}',
        '--set-json',
        'networkPolicy.metricsFromNamespaceSelector={"matchLabels":{"kubernetes.io/metadata.name":"observability"}}',
      ]);
      const np = pick(docs, 'NetworkPolicy');
      assert.deepEqual(np.spec.egress, [
        {
          to: [{ ipBlock: { cidr: '10.0.0.10/32' } }, { ipBlock: { cidr: '10.0.0.11/32' } }],
          ports: [
            { port: 443, protocol: 'TCP' },
            { port: 6443, protocol: 'TCP' },
          ],
        },
      ]);
      assert.deepEqual(np.spec.ingress, [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        },
      ]);
      const off = await template(['--set', 'networkPolicy.enabled=false']);
      assert.equal(off.filter((d) => d.kind === 'NetworkPolicy').length, 0);
    });

    it("day-one values: each one renders where it belongs, and the chart's own settings stay", async () => {
      const docs = await template([...DAY_ONE]);
      const dep = pick(docs, 'Deployment');
      const pod = dep.spec.template;
      const c = pod.spec.containers[0];
      assert.equal(c.image, `rollout-guard@${DIGEST}`, 'the digest replaces the tag');
      assert.deepEqual(pod.spec.imagePullSecrets, [{ name: 'regcred' }]);
      assert.equal(pod.spec.priorityClassName, 'system-cluster-critical');
      assert.deepEqual(pod.spec.nodeSelector, { 'node-role.kubernetes.io/infra': '' });
      assert.deepEqual(pod.spec.tolerations, [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }]);
      assert.equal(pod.spec.topologySpreadConstraints[0].topologyKey, 'topology.kubernetes.io/zone');
      assert.ok(pod.spec.affinity.podAntiAffinity, 'the default anti-affinity stays beside a spread constraint');
      assert.equal(pod.metadata.labels.team, 'platform');
      assert.equal(pod.metadata.labels['app.kubernetes.io/name'], 'rollout-guard');
      assert.deepEqual(dep.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'rollout-guard' }, 'pod labels stay out of the selector');
      assert.deepEqual(pod.metadata.annotations, { 'prometheus.io/scrape': 'false' });
      assert.deepEqual(c.args, ['run', '--workers=4', '--idle-collect-after-ms=60000'], "extra flags after the chart's own");
      assert.deepEqual(c.env.at(-1), { name: 'NODE_OPTIONS', value: '--max-old-space-size=400' });
      assert.ok(
        c.env.some((e: Obj) => e.name === 'ENABLE_POLICIES'),
        "the chart's own variables stay",
      );
      assert.deepEqual(pick(docs, 'ServiceAccount').metadata.annotations, {
        'iam.gke.io/gcp-service-account': 'rg@p.iam.gserviceaccount.com',
      });
      assert.equal(pick(docs, 'PodMonitor').metadata.labels.release, 'kube-prometheus-stack');
      assert.equal(pick(docs, 'PrometheusRule').metadata.labels.release, 'kube-prometheus-stack');
      const affinity = await template([
        '--set-json',
        'affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}',
      ]);
      const a = pick(affinity, 'Deployment').spec.template.spec.affinity;
      assert.ok(a.nodeAffinity && !a.podAntiAffinity, 'affinity replaces the default anti-affinity');
      const plain = pick(await template([]), 'Deployment').spec.template;
      assert.equal(plain.spec.imagePullSecrets, undefined);
      assert.equal(plain.metadata.annotations, undefined);
      assert.equal(plain.spec.containers[0].image, 'rollout-guard:0.1.0');
    });

    it('metrics.secure: the two flags, the Secret mounted read-only at the cert dir, and the RBAC of config/rbac-metrics-auth', async () => {
      const [docs, plain, auth] = await Promise.all([
        template(['--set', 'metrics.secure=true,metrics.certSecretName=my-tls']),
        template([]),
        kustomize('config/rbac-metrics-auth'),
      ]);
      const c = container(docs);
      assert.deepEqual(c.args, ['run', '--metrics-secure', '--metrics-cert-dir=/etc/rollout-guard/metrics-tls']);
      assert.deepEqual(c.volumeMounts, [
        { name: 'tmp', mountPath: '/tmp' },
        { name: 'metrics-tls', mountPath: '/etc/rollout-guard/metrics-tls', readOnly: true },
      ]);
      assert.deepEqual(pick(docs, 'Deployment').spec.template.spec.volumes, [
        { name: 'tmp', emptyDir: {} },
        { name: 'metrics-tls', secret: { secretName: 'my-tls' } },
      ]);
      // The objects of config/rbac-metrics-auth, exactly; nothing else is added.
      assert.deepEqual(
        differences(
          docs.filter((d) => !plain.some((p) => key(p) === key(d))),
          auth,
          'config/rbac-metrics-auth',
        ),
        [],
      );
      assert.deepEqual(container(plain).args, ['run']);
    });

    it("monitoring: a PodMonitor on the metrics port of the operator's pods; no monitoring object by default", async () => {
      const docs = await template(['--set', 'monitoring.podMonitor.enabled=true']);
      const pm = pick(docs, 'PodMonitor');
      assert.equal(pm.apiVersion, 'monitoring.coreos.com/v1');
      assert.equal(pm.metadata.namespace, INSTALL_NS);
      assert.deepEqual(pm.spec, {
        selector: { matchLabels: pick(docs, 'Deployment').spec.selector.matchLabels },
        podMetricsEndpoints: [{ port: 'metrics', honorLabels: true }],
      });
      assert.ok((container(docs).ports as Obj[]).some((p) => p.name === 'metrics'));
      const none = await template([]);
      assert.deepEqual(
        none.filter((d) => String(d.apiVersion).startsWith('monitoring.coreos.com/')),
        [],
      );
    });

    it('monitoring.prometheusRule: nothing without files/prometheus-rules.yaml; a rules file or a PrometheusRule becomes the spec; a broken file is named', async () => {
      const ON = ['--set', 'monitoring.prometheusRule.enabled=true'];
      const absent = await chartCopy(undefined);
      cleanups.push(absent.cleanup);
      assert.equal((await template(ON, { chart: absent.dir })).filter((d) => d.kind === 'PrometheusRule').length, 0);

      const rulesFile = await chartCopy(FIXTURE_RULES);
      cleanups.push(rulesFile.cleanup);
      const pr = pick(await template(ON, { chart: rulesFile.dir }), 'PrometheusRule');
      assert.equal(pr.apiVersion, 'monitoring.coreos.com/v1');
      assert.deepEqual(pr.spec, parseYaml(FIXTURE_RULES));
      assert.equal((await template([], { chart: rulesFile.dir })).filter((d) => d.kind === 'PrometheusRule').length, 0, 'off by default');

      const whole = await chartCopy(
        `apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: elsewhere}\nspec:\n${FIXTURE_RULES.replace(/^/gm, '  ')}`,
      );
      cleanups.push(whole.cleanup);
      assert.deepEqual(pick(await template(ON, { chart: whole.dir }), 'PrometheusRule').spec, parseYaml(FIXTURE_RULES));

      // The shipped rules: each runbook_url names its section of docs/runbook.md, re-rooted by runbookURL.
      const runbooks = (docs: Obj[]): string[] =>
        (pick(docs, 'PrometheusRule').spec.groups as { rules: { annotations?: { runbook_url?: string } }[] }[])
          .flatMap((g) => g.rules)
          .map((r) => r.annotations?.runbook_url ?? '');
      const shipped = runbooks(await template(ON));
      assert.ok(shipped.length >= 6 && shipped.every((u) => /^docs\/runbook\.md#rolloutguard[a-z]+$/.test(u)), shipped.join(', '));
      const BASE = 'https://git.example/ops/rollout-guard/blob/main/docs/runbook.md';
      assert.deepEqual(
        runbooks(await template([...ON, '--set', `monitoring.prometheusRule.runbookURL=${BASE}`])),
        shipped.map((u) => u.replace('docs/runbook.md', BASE)),
      );

      const broken = await chartCopy('alerts: 1\n');
      cleanups.push(broken.cleanup);
      const res = await helm(['template', 'rollout-guard', broken.dir, ...ON]);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /files\/prometheus-rules\.yaml has no rule groups/);
    });

    it('monitoring.grafanaDashboard: files/grafana-dashboard.json in a ConfigMap labelled grafana_dashboard "1", in the namespace given; nothing by default', async () => {
      const configMaps = (docs: Obj[]): Obj[] => docs.filter((d) => d.kind === 'ConfigMap' && d.metadata.labels?.grafana_dashboard === '1');
      assert.deepEqual(configMaps(await template([])), [], 'off by default');
      const [cm, more] = configMaps(
        await template(['--set', 'monitoring.grafanaDashboard.enabled=true,monitoring.grafanaDashboard.namespace=monitoring'], {
          ns: 'rollout-guard-system',
        }),
      );
      assert.equal(more, undefined, 'one dashboard');
      assert.equal(cm?.metadata.namespace, 'monitoring');
      const dashboard = JSON.parse(await readFile(join(CHART, 'files/grafana-dashboard.json'), 'utf8')) as Obj;
      assert.deepEqual(JSON.parse(cm?.data['rollout-guard.json'] as string), dashboard);
      assert.equal(dashboard.uid, 'rollout-guard');
    });

    it('crds: the templates render config/crd in content, with the standard labels and helm.sh/resource-policy: keep; crds.keep=false drops the annotation; crds.enabled=false renders no CRD', async () => {
      const [docs, expected] = await Promise.all([template([]), configCrds()]);
      const crds = docs.filter((d) => d.kind === 'CustomResourceDefinition');
      assert.deepEqual(crds.map((d) => d.metadata.name as string).sort(), [...expected.keys()].sort());
      for (const crd of crds) {
        const file = expected.get(crd.metadata.name as string)!;
        // The content is config/crd's: the metadata gains the labels and the annotation only.
        assert.deepEqual({ ...crd, metadata: undefined }, { ...file, metadata: undefined }, crd.metadata.name as string);
        assert.deepEqual(Object.keys(crd.metadata as Obj).sort(), ['annotations', 'labels', 'name']);
        assert.deepEqual(crd.metadata.annotations, { [KEEP]: 'keep' });
        for (const l of HELM_LABELS) assert.ok(crd.metadata.labels[l], `${key(crd)}: ${l}`);
      }
      const unkept = (await template(['--set', 'crds.keep=false'])).filter((d) => d.kind === 'CustomResourceDefinition');
      assert.equal(unkept.length, crds.length);
      for (const crd of unkept) assert.equal(crd.metadata.annotations, undefined, `${key(crd)}: no keep annotation`);
      const none = await template(['--set', 'crds.enabled=false']);
      assert.deepEqual(none.filter((d) => d.kind === 'CustomResourceDefinition').map(key), []);
      assert.equal(none.length, docs.length - crds.length, 'everything else stays');
    });

    it('names: nameOverride and fullnameOverride name every object; the default release rollout-guard keeps deploy/ names and no LEASE_NAME', async () => {
      const plain = await template([]);
      assert.deepEqual(
        plain
          .filter((d) => d.kind !== 'CustomResourceDefinition')
          .map((d) => d.metadata.name as string)
          .filter((n) => !n.startsWith('rollout-guard')),
        [],
      );
      assert.equal(envOf(plain, 'LEASE_NAME'), undefined, "the operator's default Lease, rollout-guard, as deploy/");
      const other = await template([], { release: 'team-a' });
      assert.equal(
        pick(other, 'Deployment').metadata.name,
        'team-a-rollout-guard',
        '<release>-<chart> when the release lacks the chart name',
      );
      assert.equal(envOf(other, 'LEASE_NAME'), 'team-a-rollout-guard', 'one Lease per release');
      const docs = await template(['--set', 'fullnameOverride=blue,nameOverride=rg-blue,metrics.secure=true']);
      for (const d of docs.filter((x) => x.kind !== 'CustomResourceDefinition'))
        assert.match(d.metadata.name as string, /^blue(-[a-z-]+)?$/, key(d));
      assert.equal(envOf(docs, 'LEASE_NAME'), 'blue');
      const dep = pick(docs, 'Deployment');
      assert.deepEqual(dep.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'rg-blue' });
      assert.equal(dep.spec.template.metadata.labels['app.kubernetes.io/name'], 'rg-blue');
      assert.equal(dep.spec.template.spec.serviceAccountName, 'blue');
      for (const d of docs)
        for (const s of (d.subjects ?? []) as Obj[])
          assert.deepEqual(s, { kind: 'ServiceAccount', name: 'blue', namespace: INSTALL_NS }, key(d));
      const named = await template([], { release: 'rollout-guard-team-b' });
      assert.equal(
        pick(named, 'Deployment').metadata.name,
        'rollout-guard-team-b',
        'a release name that contains the chart name is the fullname',
      );
    });

    it('two releases with different names (the second with crds.enabled=false, as the CRDs are shared) render no object name in common, cluster-scoped ones included', async () => {
      for (const mode of [
        ['--set', 'metrics.secure=true,monitoring.serviceMonitor.enabled=true'],
        ['--set', 'watchNamespaces={w1}'],
      ]) {
        const [a, b] = await Promise.all([
          template(mode, { release: 'team-a', ns: 'team-a' }),
          template([...mode, '--set', 'crds.enabled=false'], { release: 'team-b', ns: 'team-b' }),
        ]);
        // Namespaced objects too, by kind and name alone: the two releases could share a namespace.
        const names = (docs: readonly Obj[]): Set<string> => new Set(docs.map((d) => `${d.kind}/${d.metadata.name}`));
        const common = [...names(a)].filter((n) => names(b).has(n));
        assert.deepEqual(common, [], mode.join(' '));
        const clusterScoped = (docs: readonly Obj[]): number => docs.filter((d) => CLUSTER_KINDS.has(d.kind as string)).length;
        assert.ok(clusterScoped(a) >= 4 && clusterScoped(b) >= 2, 'both releases have cluster-scoped objects');
        assert.ok(!b.some((d) => d.kind === 'CustomResourceDefinition'));
        // Each release's bindings name its own roles and its own ServiceAccount.
        for (const [docs, rel] of [
          [a, 'team-a'],
          [b, 'team-b'],
        ] as const)
          for (const d of docs.filter((x) => x.roleRef)) {
            assert.ok((d.roleRef.name as string).startsWith(`${rel}-rollout-guard`), key(d));
            assert.deepEqual(d.subjects, [{ kind: 'ServiceAccount', name: `${rel}-rollout-guard`, namespace: rel }], key(d));
          }
        assert.notEqual(envOf(a, 'LEASE_NAME'), envOf(b, 'LEASE_NAME'));
      }
    });

    it('serviceAccount.create=false: no ServiceAccount, the named one in the pod and every binding; name alone renames the created one', async () => {
      const docs = await template(['--set', 'serviceAccount.create=false,serviceAccount.name=platform-sa,watchNamespaces={w1}'], {
        ns: 'ops',
      });
      assert.deepEqual(docs.filter((d) => d.kind === 'ServiceAccount').map(key), []);
      assert.equal(pick(docs, 'Deployment').spec.template.spec.serviceAccountName, 'platform-sa');
      const bindings = docs.filter((d) => d.subjects);
      assert.ok(bindings.length >= 3);
      for (const d of bindings) assert.deepEqual(d.subjects, [{ kind: 'ServiceAccount', name: 'platform-sa', namespace: 'ops' }], key(d));
      const renamed = await template(['--set', 'serviceAccount.name=rg-operator']);
      assert.equal(pick(renamed, 'ServiceAccount').metadata.name, 'rg-operator');
      assert.equal(pick(renamed, 'Deployment').spec.template.spec.serviceAccountName, 'rg-operator');
      assert.equal(pick(await template([]), 'ServiceAccount').metadata.name, 'rollout-guard');
    });

    it('monitoring.serviceMonitor: a Service on the metrics port and a ServiceMonitor selecting it, labels and interval as given; HTTPS with a token under metrics.secure', async () => {
      const ON = [
        '--set',
        'monitoring.serviceMonitor.enabled=true,monitoring.serviceMonitor.interval=30s',
        '--set-json',
        'monitoring.serviceMonitor.labels={"release":"kube-prometheus-stack"}',
      ];
      const docs = await template(ON);
      const svc = pick(docs, 'Service');
      const sm = pick(docs, 'ServiceMonitor');
      const selector = pick(docs, 'Deployment').spec.selector.matchLabels as Obj;
      assert.equal(svc.metadata.name, 'rollout-guard-metrics');
      assert.deepEqual(svc.spec.selector, selector);
      assert.deepEqual(svc.spec.ports, [{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]);
      assert.ok((container(docs).ports as Obj[]).some((p) => p.name === 'metrics' && p.containerPort === 8080));
      assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
      assert.equal(sm.metadata.labels.release, 'kube-prometheus-stack');
      assert.ok(contains(svc.metadata.labels, sm.spec.selector.matchLabels), 'the ServiceMonitor selects the Service');
      assert.deepEqual(sm.spec.namespaceSelector, { matchNames: [INSTALL_NS] });
      assert.deepEqual(sm.spec.endpoints, [{ port: 'metrics', honorLabels: true, interval: '30s' }]);
      const secure = await template([...ON, '--set', 'metrics.secure=true,metrics.certSecretName=my-tls']);
      assert.deepEqual(pick(secure, 'ServiceMonitor').spec.endpoints, [
        {
          port: 'metrics',
          honorLabels: true,
          interval: '30s',
          scheme: 'https',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          tlsConfig: { serverName: `rollout-guard-metrics.${INSTALL_NS}.svc`, ca: { secret: { name: 'my-tls', key: 'ca.crt' } } },
        },
      ]);
      const plain = await template([]);
      assert.deepEqual(
        plain.filter((d) => d.kind === 'Service' || d.kind === 'ServiceMonitor'),
        [],
      );
    });
  });

  describe('kubectl apply --dry-run=server accepts the rendered chart', () => {
    let ns: string;
    let watched: string[];
    /** Why the monitoring dry run cannot run, or undefined. */
    let monitoringSkip: string | undefined;

    /** Applies `docs` with --dry-run=server; returns kubectl's output, failing on a refusal. */
    async function dryRun(docs: readonly Obj[]): Promise<{ stdout: string; stderr: string }> {
      const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }),
        allowFail: true,
      });
      assert.equal(res.code, 0, res.stderr);
      for (const d of docs)
        assert.match(res.stdout, new RegExp(`/${d.metadata.name as string} (created|configured|unchanged) \\(server dry run\\)`), key(d));
      return res;
    }

    /** The tools cache beside the pinned binaries (cluster/build.sh: <cache>/<key>/bin and <cache>/tools). */
    const toolsDir = (): string => resolve(binDir(), '../../tools');

    /** The PodMonitor and PrometheusRule CRDs of the pinned prometheus-operator, fetched once with the go command. */
    async function monitoringCrds(): Promise<string[] | string> {
      const dir = join(toolsDir(), `prometheus-operator-crds-${PROMETHEUS_OPERATOR_VERSION}`);
      const files = MONITORING_CRDS.map((f) => join(dir, f));
      const cached = await Promise.all(
        files.map((f) =>
          access(f).then(
            () => true,
            () => false,
          ),
        ),
      );
      if (cached.every(Boolean)) return files;
      const cwd = await mkdtemp(join(tmpdir(), 'rg-gomod-'));
      try {
        const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
        const res = await run('go', ['mod', 'download', '-json', `${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION}`], {
          cwd,
          env,
          timeoutMs: 600_000,
        }).catch((e: Error) => ({ code: 1, stdout: '', stderr: e.message }));
        let info: Obj = {};
        try {
          info = JSON.parse(res.stdout) as Obj;
        } catch {
          // reported below
        }
        if (res.code !== 0 || !info.Dir)
          return `go mod download ${PROMETHEUS_OPERATOR_MODULE}@${PROMETHEUS_OPERATOR_VERSION} failed: ${String(info.Error ?? '') || res.stderr.trim() || `exit ${res.code}`}`;
        await mkdir(dir, { recursive: true });
        for (const f of MONITORING_CRDS) await copyFile(join(info.Dir as string, 'example/prometheus-operator-crd', f), join(dir, f));
        return files;
      } finally {
        await rm(cwd, { recursive: true, force: true });
      }
    }

    before(async () => {
      ns = uniqueName('chart-dry');
      watched = [uniqueName('chart-dry-w0'), uniqueName('chart-dry-w1')];
      cleanups.push(async () => {
        await kubectl(['delete', 'namespace', ns, ...watched, '--ignore-not-found', '--wait=false']);
      });
      // The release namespace warns (and enforces) on the restricted profile, as docs/install.md says to label it.
      const psa = {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/audit': 'restricted',
      };
      await createNamespaceIn(kubectl, ns, psa);
      for (const w of watched) await createNamespaceIn(kubectl, w);
    });

    it('defaults, with the CRD templates: accepted without a Pod Security warning, and nothing stored', async () => {
      const docs = await template([], { ns });
      assert.ok(docs.some((d) => d.kind === 'CustomResourceDefinition'));
      const res = await dryRun(docs);
      assert.doesNotMatch(res.stderr, /PodSecurity|would violate/i, res.stderr);
      const left = await kubectl([
        'get',
        'deployment,serviceaccount,networkpolicy,poddisruptionbudget,role,rolebinding',
        '-n',
        ns,
        '-o',
        'name',
      ]);
      assert.deepEqual(
        left.stdout.split('\n').filter((l) => l && l !== 'serviceaccount/default'),
        [],
        "only the namespace's own default ServiceAccount",
      );
      // Negative control: without two of the defaults the same dry run warns, so the check above is not vacuous.
      const weakened = await template(['--set', 'podSecurityContext.runAsNonRoot=null,securityContext.allowPrivilegeEscalation=null'], {
        ns,
      });
      const warned = await dryRun(weakened.filter((d) => d.kind === 'Deployment'));
      assert.match(
        warned.stderr,
        /would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false .*runAsNonRoot != true/,
      );
    });

    it('namespaced mode (two watched namespaces, which exist) and report-only: accepted', async () => {
      await dryRun(await template(['--set', `watchNamespaces={${watched.join(',')}}`], { ns }));
      await dryRun(await template(['--set', `watchNamespaces={${watched.join(',')}},undo.enabled=false,metrics.secure=true`], { ns }));
      const left = await kubectl(['get', 'role,rolebinding', '-n', watched[0]!, '-o', 'name']);
      assert.equal(left.stdout.trim(), '');
    });

    it("the day-one values (less the monitoring objects, which need prometheus-operator's CRDs): accepted without a Pod Security warning", async () => {
      const docs = (await template([...DAY_ONE], { ns })).filter((d) => d.kind !== 'PodMonitor' && d.kind !== 'PrometheusRule');
      const res = await dryRun(docs);
      assert.doesNotMatch(res.stderr, /PodSecurity|would violate/i, res.stderr);
    });

    it('secure metrics, no policies, report-only, one replica: accepted without a Pod Security warning', async () => {
      const res = await dryRun(
        await template(['--set', 'metrics.secure=true,policies.enabled=false,undo.enabled=false,replicaCount=1'], { ns }),
      );
      assert.doesNotMatch(res.stderr, /PodSecurity|would violate/i, res.stderr);
    });

    it(`monitoring on: the PodMonitor, the ServiceMonitor (plain and secure) and a PrometheusRule accepted by the prometheus-operator ${PROMETHEUS_OPERATOR_VERSION} CRDs`, async (t) => {
      const crds = await monitoringCrds();
      if (typeof crds === 'string') {
        monitoringSkip = crds;
        t.diagnostic(`skipped: ${monitoringSkip}`);
        process.stderr.write(`chart.test: monitoring dry run skipped: ${monitoringSkip}\n`);
        t.skip(monitoringSkip);
        return;
      }
      for (const f of crds) await kubectl(['apply', '--server-side', '--force-conflicts', '-f', f]);
      await waitForCrdsEstablished(kubectl, [
        'podmonitors.monitoring.coreos.com',
        'prometheusrules.monitoring.coreos.com',
        'servicemonitors.monitoring.coreos.com',
      ]);
      const copy = await chartCopy(FIXTURE_RULES);
      cleanups.push(copy.cleanup);
      const docs = await template(['--set', 'monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true'], {
        ns,
        chart: copy.dir,
      });
      const monitoring = docs.filter((d) => ['PodMonitor', 'PrometheusRule'].includes(d.kind as string));
      assert.deepEqual(monitoring.map((d) => d.kind as string).sort(), ['PodMonitor', 'PrometheusRule']);
      await dryRun(docs);
      // The chart as it is (with files/prometheus-rules.yaml if it has been written).
      await dryRun(await template(['--set', 'monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true'], { ns }));
      // The Service and ServiceMonitor, plain and under metrics.secure (HTTPS, token, CA of the Secret).
      const SM = '--set=monitoring.serviceMonitor.enabled=true,monitoring.serviceMonitor.interval=30s';
      const plainSm = await template([SM], { ns });
      assert.equal(plainSm.filter((d) => d.kind === 'ServiceMonitor' || d.kind === 'Service').length, 2);
      await dryRun(plainSm);
      await dryRun(await template([SM, '--set=metrics.secure=true'], { ns }));
      // Negative control: the CRD's schema is in force, so the dry run would catch a broken object.
      const bad = structuredClone(monitoring.find((d) => d.kind === 'PodMonitor')!);
      bad.spec.podMetricsEndpoints[0].honorLabels = 'yes';
      const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(bad), allowFail: true });
      assert.notEqual(res.code, 0, 'a PodMonitor with a string honorLabels was accepted');
      assert.match(res.stderr, /honorLabels/);
    });
  });

  describe('helm upgrade from the crds/ layout adopts and upgrades the CRDs; helm uninstall keeps them', () => {
    const rel = uniqueName('rollout-guard-up');
    /**
     * The CRD copies live under a unique API group, with kinds, names and no short names or categories of
     * their own: the real rolloutguard.dev CRDs serve the other suites, and kubectl resolves `rolloutguard`
     * or `rg` across every group that serves such a name.
     */
    const group = `${rel.split('-').at(-1)!}.chart-test.rolloutguard.dev`;
    const crdNames = ['charttestrolloutguards', 'charttestrolloutguardpolicies'].map((p) => `${p}.${group}`);
    const isolate = (crd: string): string =>
      crd
        .replaceAll('rolloutguard.dev', group)
        .replaceAll('RolloutGuard', 'ChartTestRolloutGuard')
        .replace(/^(\s*(?:name|plural|singular): )rolloutguard/gm, '$1charttestrolloutguard')
        .replace(/^\s*(?:shortNames|categories): .*\n/gm, '');
    /** The previous chart's RolloutGuard CRD lacks this printer column and this enum value. */
    const DROPPED_COLUMN = '        - {name: Fault, type: string, jsonPath: .status.owner}\n';
    const DROPPED_ENUM: readonly [string, string] = ['enum: [Report, Undo]', 'enum: [Report]'];
    // No pod is ever scheduled: the release's operator must not reconcile the other suites' guards.
    const VALUES = [
      '--set',
      'replicaCount=1,undo.enabled=false,policies.enabled=false',
      '--set-json',
      `nodeSelector={"${TEST_LABEL}":"no-such-node"}`,
    ];
    let ns: string;
    let previous: string;
    let current: string;

    /** The current chart with its CRDs under `group`, and the previous layout: the same with crds/ and an older RolloutGuard CRD. */
    async function buildCharts(tmp: string): Promise<void> {
      current = join(tmp, 'current/rollout-guard');
      previous = join(tmp, 'previous/rollout-guard');
      await cp(CHART, current, { recursive: true });
      for (const f of await crdFiles(join(CHART, 'files/crds')))
        await writeFile(join(current, 'files/crds', f), isolate(await readFile(join(CHART, 'files/crds', f), 'utf8')));
      await cp(current, previous, { recursive: true });
      await rm(join(previous, 'templates/crds.yaml'));
      await rm(join(previous, 'files/crds'), { recursive: true });
      await mkdir(join(previous, 'crds'));
      for (const f of await crdFiles(join(current, 'files/crds'))) {
        let text = await readFile(join(current, 'files/crds', f), 'utf8');
        if (f === 'rolloutguards.yaml') {
          assert.ok(text.includes(DROPPED_COLUMN) && text.includes(DROPPED_ENUM[0]), 'the fixture edits still apply to config/crd');
          text = text.replace(DROPPED_COLUMN, '').replace(...DROPPED_ENUM);
        }
        await writeFile(join(previous, 'crds', f), text);
      }
    }

    const liveCrd = async (name: string): Promise<Obj> => JSON.parse((await kubectl(['get', 'crd', name, '-o', 'json'])).stdout) as Obj;
    const columns = (crd: Obj): string[] => ((crd.spec.versions[0].additionalPrinterColumns ?? []) as Obj[]).map((c) => c.name as string);
    const actionEnum = (crd: Obj): unknown =>
      crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.onStall.properties.action.enum;

    before(async () => {
      const tmp = await mkdtemp(join(tmpdir(), 'rg-chart-upgrade-'));
      ns = uniqueName('chart-upgrade');
      cleanups.push(async () => {
        await helm(['uninstall', rel, '-n', ns, '--ignore-not-found']);
        await kubectl(['delete', 'crd', ...crdNames, '--ignore-not-found', '--wait=false']);
        await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
        await rm(tmp, { recursive: true, force: true });
      });
      await buildCharts(tmp);
      await createNamespaceIn(kubectl, ns);
    });

    it('install of the previous layout, a guard, the adoption commands, helm upgrade, helm uninstall', async () => {
      const install = await helm(['install', rel, previous, '-n', ns, ...VALUES]);
      assert.equal(install.code, 0, install.stderr);
      await waitForCrdsEstablished(kubectl, crdNames);
      const old = await liveCrd(crdNames[0]!);
      assert.ok(!columns(old).includes('Fault') && isDeepStrictEqual(actionEnum(old), ['Report']), 'the previous CRD is installed');
      await apply({
        apiVersion: `${group}/v1alpha1`,
        kind: 'ChartTestRolloutGuard',
        metadata: { name: 'kept', namespace: ns },
        spec: { targetRef: { kind: 'DaemonSet', name: 'kept' } },
      });
      // Without the adoption commands Helm refuses the CRDs it did not create as release objects.
      const refused = await helm(['upgrade', rel, current, '-n', ns, ...VALUES]);
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stderr, /cannot be imported into the current release: invalid ownership metadata/);
      // The commands of NOTES.txt and the upgrade docs.
      await kubectl(['label', 'crd', ...crdNames, 'app.kubernetes.io/managed-by=Helm', '--overwrite']);
      await kubectl([
        'annotate',
        'crd',
        ...crdNames,
        `meta.helm.sh/release-name=${rel}`,
        `meta.helm.sh/release-namespace=${ns}`,
        '--overwrite',
      ]);
      const upgrade = await helm(['upgrade', rel, current, '-n', ns, ...VALUES]);
      assert.equal(upgrade.code, 0, upgrade.stderr);
      await assertCurrentCrds();
      const uninstall = await helm(['uninstall', rel, '-n', ns]);
      assert.equal(uninstall.code, 0, uninstall.stderr);
      const gone = await kubectl(['get', 'clusterrole', rel], { allowFail: true });
      assert.notEqual(gone.code, 0, "the release's ClusterRole went with it");
      for (const n of crdNames) assert.equal((await liveCrd(n)).metadata.annotations?.[KEEP], 'keep', `${n} kept`);
      const guard = await kubectl(['get', `charttestrolloutguards.${group}`, 'kept', '-n', ns, '-o', 'name']);
      assert.equal(guard.stdout.trim(), `charttestrolloutguard.${group}/kept`);
    });

    /** The stored CRDs hold the current files' content (under the test group), Helm's labels and the keep annotation. */
    async function assertCurrentCrds(): Promise<void> {
      for (const f of await crdFiles(join(current, 'files/crds'))) {
        const file = parseYaml(await readFile(join(current, 'files/crds', f), 'utf8')) as Obj;
        const live = await liveCrd(file.metadata.name as string);
        assert.ok(contains(live.spec, file.spec), `${f}: the stored spec is the current file's`);
        assert.equal(live.metadata.labels['app.kubernetes.io/instance'], rel);
        assert.equal(live.metadata.annotations[KEEP], 'keep');
      }
      const upgraded = await liveCrd(crdNames[0]!);
      assert.ok(columns(upgraded).includes('Fault'), 'the printer column is back');
      assert.deepEqual(actionEnum(upgraded), ['Report', 'Undo']);
    }
  });

  describe('RBAC of the chart, installed and asked with kubectl auth can-i', { concurrency: 8 }, () => {
    const suffix = uniqueName('chart').replace(/^chart-/, 'chart');
    let nsFull: string;
    let nsReport: string;
    let nsNoPolicies: string;
    let nsOp: string;
    let watched: string[];
    let unwatched: string;
    const sa = (ns: string): string => `system:serviceaccount:${ns}:rollout-guard`;

    before(async () => {
      nsFull = uniqueName('chart-rbac');
      nsReport = uniqueName('chart-rbac-ro');
      nsNoPolicies = uniqueName('chart-rbac-np');
      nsOp = uniqueName('chart-ns-op');
      watched = [uniqueName('chart-ns-w0'), uniqueName('chart-ns-w1')];
      unwatched = uniqueName('chart-ns-other');
      const all = [nsFull, nsReport, nsNoPolicies, nsOp, ...watched, unwatched];
      const suffixes = [suffix, `${suffix}-ro`, `${suffix}-np`, `${suffix}-ns`];
      cleanups.push(async () => {
        for (const s of suffixes)
          await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${s}`, '--ignore-not-found']);
        await kubectl(['delete', 'namespace', ...all, '--ignore-not-found', '--wait=false']);
      });
      for (const n of all) await createNamespaceIn(kubectl, n);
      const [full, report, noPolicies, namespaced] = await Promise.all([
        template([], { ns: nsFull }),
        template(['--set', 'undo.enabled=false'], { ns: nsReport }),
        template(['--set', 'policies.enabled=false'], { ns: nsNoPolicies }),
        template(['--set', `watchNamespaces={${watched.join(',')}}`], { ns: nsOp }),
      ]);
      const items = [
        ...relocate(full, suffixes[0]!, [nsFull]),
        ...relocate(report, suffixes[1]!, [nsReport]),
        ...relocate(noPolicies, suffixes[2]!, [nsNoPolicies]),
        ...relocate(namespaced, suffixes[3]!, [nsOp, ...watched]),
      ];
      await apply({ apiVersion: 'v1', kind: 'List', items });
      // RBAC changes reach the authorizer through its informers: wait until every copy is in effect.
      await waitFor(
        async () =>
          (await canI(sa(nsFull), ['patch', 'daemonsets.apps', '-n', 'default'])) &&
          (await canI(sa(nsFull), ['create', 'rolloutguards.rolloutguard.dev', '-n', 'default'])) &&
          (await canI(sa(nsReport), ['list', 'pods', '-A'])) &&
          (await canI(sa(nsNoPolicies), ['patch', 'daemonsets.apps', '-n', 'default'])) &&
          (await canI(sa(nsOp), ['patch', 'daemonsets.apps', '-n', watched[1]!])) &&
          (await canI(sa(nsOp), ['list', 'nodes'])) &&
          (await canI(sa(nsOp), ['update', 'leases.coordination.k8s.io', '-n', nsOp])),
        { timeoutMs: 30_000, describe: 'the chart RBAC copies in effect' },
      );
    });

    it('defaults: everything the operator needs (policies and undo included), nothing it must never do', async () => {
      await expectCan(sa(nsFull), [...ALLOWED, ...POLICY_ALLOWED, ...UNDO_ALLOWED], true);
      await expectCan(sa(nsFull), DENIED, false);
    });

    it('defaults: leader election in the release namespace only', async () => {
      await expectCan(
        sa(nsFull),
        ['get', 'create', 'update'].map((v) => [v, 'leases.coordination.k8s.io', '-n', nsFull]),
        true,
      );
      await expectCan(
        sa(nsFull),
        [
          ['delete', 'leases.coordination.k8s.io', '-n', nsFull],
          ['update', 'leases.coordination.k8s.io', '-n', nsReport],
        ],
        false,
      );
    });

    it('undo.enabled=false: cannot patch DaemonSets anywhere; everything else as the defaults', async () => {
      await expectCan(
        sa(nsReport),
        [
          ['patch', 'daemonsets.apps', '-n', 'default'],
          ['patch', 'daemonsets.apps', '-A'],
          ['patch', 'daemonsets.apps', '-n', 'kube-system'],
        ],
        false,
      );
      await expectCan(sa(nsReport), UNDO_ALLOWED, false);
      await expectCan(sa(nsReport), [...ALLOWED, ...POLICY_ALLOWED], true);
      await expectCan(sa(nsReport), DENIED, false);
    });

    it('policies.enabled=false: cannot create, patch or delete guards, nor read policies or namespaces; everything else as the defaults', async () => {
      const guardWrites = ['create', 'patch', 'delete'].flatMap((v) => [
        [v, 'rolloutguards.rolloutguard.dev', '-n', 'default'],
        [v, 'rolloutguards.rolloutguard.dev', '-A'],
      ]);
      await expectCan(sa(nsNoPolicies), [...guardWrites, ...POLICY_ALLOWED], false);
      await expectCan(sa(nsNoPolicies), [...ALLOWED, ...UNDO_ALLOWED], true);
      await expectCan(sa(nsNoPolicies), DENIED, false);
    });

    it('no mode can patch, update or delete an Event, in any namespace', async () => {
      const eventWrites = ['patch', 'update', 'delete'].flatMap((v) => [
        [v, 'events.events.k8s.io', '-A'],
        [v, 'events.events.k8s.io', '-n', 'default'],
        [v, 'events', '-A'],
        [v, 'events', '-n', 'default'],
        ...watched.flatMap((w) => [
          [v, 'events.events.k8s.io', '-n', w],
          [v, 'events', '-n', w],
        ]),
      ]);
      for (const n of [nsFull, nsReport, nsNoPolicies, nsOp]) await expectCan(sa(n), eventWrites, false);
    });

    it('namespaced: patches DaemonSets in the watched namespaces only (not kube-system, default, an unwatched one, nor across namespaces)', async () => {
      await expectCan(
        sa(nsOp),
        watched.map((w) => ['patch', 'daemonsets.apps', '-n', w]),
        true,
      );
      await expectCan(
        sa(nsOp),
        [
          ['patch', 'daemonsets.apps', '-n', 'kube-system'],
          ['patch', 'daemonsets.apps', '-n', 'default'],
          ['patch', 'daemonsets.apps', '-n', unwatched],
          ['patch', 'daemonsets.apps', '-n', nsOp],
          ['patch', 'daemonsets.apps', '-A'],
        ],
        false,
      );
    });

    it('namespaced: cannot create, patch, update or delete RolloutGuards anywhere; patches their status in the watched namespaces only', async () => {
      const nss = [...watched, unwatched, 'default', 'kube-system'];
      await expectCan(
        sa(nsOp),
        ['create', 'patch', 'delete', 'update'].flatMap((v) => [
          [v, 'rolloutguards.rolloutguard.dev', '-A'],
          ...nss.map((n) => [v, 'rolloutguards.rolloutguard.dev', '-n', n]),
        ]),
        false,
      );
      const status = (n: string): string[] => ['patch', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', n];
      await expectCan(sa(nsOp), watched.map(status), true);
      await expectCan(sa(nsOp), [status(unwatched), status('default'), status('kube-system')], false);
    });

    it('namespaced: reads and creates Events in the watched namespaces only; cluster-wide it reads nodes and nothing else', async () => {
      const reads = ['get', 'list', 'watch'].flatMap((v) =>
        ['daemonsets.apps', 'controllerrevisions.apps', 'pods', 'rolloutguards.rolloutguard.dev', 'events'].map((r) => [
          v,
          r,
          '-n',
          'default',
        ]),
      );
      for (const w of watched) await expectCan(sa(nsOp), [...inNamespace(reads, w), ['create', 'events.events.k8s.io', '-n', w]], true);
      await expectCan(
        sa(nsOp),
        [...inNamespace(reads, unwatched), ...inNamespace(reads, 'kube-system'), ...reads, ...reads.map((q) => [q[0]!, q[1]!, '-A'])],
        false,
      );
      await expectCan(
        sa(nsOp),
        [
          ['create', 'events.events.k8s.io', '-n', unwatched],
          ['create', 'events.events.k8s.io', '-n', 'kube-system'],
        ],
        false,
      );
      await expectCan(
        sa(nsOp),
        [
          ['get', 'nodes'],
          ['list', 'nodes'],
          ['watch', 'nodes'],
        ],
        true,
      );
      await expectCan(sa(nsOp), [...POLICY_ALLOWED, ['get', 'namespaces'], ['get', 'rolloutguardpolicies.rolloutguard.dev']], false);
    });

    it('namespaced: nothing it must never do, in a watched namespace either; leader election in the release namespace only', async () => {
      await expectCan(sa(nsOp), DENIED, false);
      for (const w of watched) await expectCan(sa(nsOp), inNamespace(DENIED, w), false);
      await expectCan(
        sa(nsOp),
        ['get', 'create', 'update'].map((v) => [v, 'leases.coordination.k8s.io', '-n', nsOp]),
        true,
      );
      await expectCan(
        sa(nsOp),
        [['delete', 'leases.coordination.k8s.io', '-n', nsOp], ...watched.map((w) => ['update', 'leases.coordination.k8s.io', '-n', w])],
        false,
      );
    });
  });
});
