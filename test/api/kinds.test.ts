/**
 * The kind registry (src/api/kinds.ts) is the one place a kind is described, and it stays that way:
 *   - each descriptor describes its own kind, and what tells kinds apart (short names, suffixes, status
 *     fields) is never shared by two; exactly one kind is original, the default one;
 *   - kubectl's names for a kind's resource lead back to it;
 *   - the CRDs' enums of kinds list exactly TARGET_KINDS, and the RBAC files grant each kind's rights;
 *   - outside the registry and the per-kind files no code names a kind: no string literal that is a kind's
 *     name (`kind === 'DaemonSet' ? … : …`, `?? 'DaemonSet'`), no DAEMONSET_KIND-style constant. A check
 *     like that compiles for a kind added later and treats it as one of the first two; a lookup in the
 *     registry does not compile until the new kind is described. Tables keyed by kind
 *     (`Record<TargetKind, …>`, whose keys tsc holds complete) may be written anywhere.
 * Per-kind files: src/api/kinds.ts itself, src/api/names.ts (where the API's names are spelled), files
 * named for their kind (`daemonSet.ts`, `slimStatefulSet.ts`), and files in a folder of kinds, workloads
 * or targets (`reconcile/targets/`).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import {
  DEFAULT_KIND,
  KINDS,
  TARGET_KINDS,
  controllingWorkload,
  kindOfResource,
  mapKinds,
  podControllerKind,
  resourceNames,
  type KindRight,
} from '../../src/api/kinds.js';

/** The repository root: this file runs as dist/test/api/kinds.test.js. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SRC = join(ROOT, 'src');

/**
 * The files outside the registry and the per-kind files that still name a kind, each with why. A file
 * listed here that no longer names one fails the suite, so the list only shrinks.
 */
const KNOWN: Readonly<Record<string, string>> = {};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Whether `path` (relative to src/, `/`-separated) may name kinds. */
export function perKindFile(path: string): boolean {
  if (path === 'api/kinds.ts' || path === 'api/names.ts') return true;
  const parts = path.split('/');
  const base = parts[parts.length - 1]!.replace(/\.ts$/, '').toLowerCase();
  if (TARGET_KINDS.some((k) => base.includes(k.toLowerCase()))) return true;
  return parts.slice(0, -1).some((d) => ['kinds', 'workloads', 'targets'].includes(d));
}

const KIND_NAMES: ReadonlySet<string> = new Set(TARGET_KINDS);
/** The constants of src/api/names.ts that spell a kind: DAEMONSET_KIND, STATEFULSET_KIND. */
const KIND_CONSTANTS: ReadonlySet<string> = new Set(TARGET_KINDS.map((k) => `${k.toUpperCase()}_KIND`));

/** Where `text` names a kind in code (comments and longer strings aside), as `file:line 'text'`. */
export function kindNamings(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node): string => `${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} ${n.getText(sf)}`;
  const visit = (n: ts.Node): void => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && KIND_NAMES.has(n.text)) out.push(at(n));
    else if (ts.isIdentifier(n) && KIND_CONSTANTS.has(n.text)) out.push(at(n));
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** An RBAC rule, as YAML holds it. */
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The rules of the RBAC object `kind`/`name` in a YAML file of config/. */
function rulesOf(file: string, kind: string, name: string): Rule[] {
  const docs = parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map(
    (d) => d.toJS() as { kind?: string; metadata?: { name?: string }; rules?: Rule[] } | null,
  );
  const o = docs.find((d) => d?.kind === kind && d?.metadata?.name === name);
  assert.ok(o?.rules, `${file}: no ${kind} ${name} with rules`);
  return o.rules;
}

function grants(rules: readonly Rule[], right: KindRight): boolean {
  return right.verbs.every((verb) =>
    rules.some((r) => r.apiGroups.includes(right.group) && r.resources.includes(right.resource) && r.verbs.includes(verb)),
  );
}

describe('the kind registry', () => {
  it('describes each kind under its own name, in the order of TARGET_KINDS', () => {
    assert.deepEqual(Object.keys(KINDS), [...TARGET_KINDS]);
    for (const k of TARGET_KINDS) assert.equal(KINDS[k].kind, k);
  });

  it('has exactly one original kind, the default one', () => {
    assert.deepEqual(
      TARGET_KINDS.filter((k) => KINDS[k].original),
      [DEFAULT_KIND],
    );
  });

  it('tells kinds apart: no two share a short name, a suffix, a field or a status list', () => {
    for (const fact of ['short', 'resource', 'eventSuffix', 'guardNameSuffix', 'field', 'statusList', 'matchedCount'] as const) {
      const values = TARGET_KINDS.map((k) => KINDS[k][fact]);
      assert.equal(new Set(values).size, values.length, `${fact}: ${values.join(', ')}`);
    }
  });

  it("leads every name kubectl takes for a kind's resource back to the kind, in any case", () => {
    for (const k of TARGET_KINDS)
      for (const name of resourceNames(k)) {
        assert.equal(kindOfResource(name), k, name);
        assert.equal(kindOfResource(name.toUpperCase()), k, name);
      }
    assert.deepEqual(resourceNames('DaemonSet'), ['ds', 'daemonset', 'daemonsets', 'daemonset.apps', 'daemonsets.apps']);
    assert.equal(kindOfResource('rg'), undefined);
    assert.equal(kindOfResource('pods'), undefined);
  });

  it('maps every kind, in order', () => {
    assert.deepEqual(
      mapKinds((d) => d.short),
      { DaemonSet: 'ds', StatefulSet: 'sts', Deployment: 'deploy' },
    );
  });
});

describe('the Deployment in the registry', () => {
  const rsOf = (owner: string) => ({ ownerReferences: [{ kind: owner, name: 'web', uid: `${owner}-uid`, controller: true }] });
  const pod = { ownerReferences: [{ kind: 'ReplicaSet', name: 'web-bbb', uid: 'rs-uid', controller: true }] };

  it("is named by kubectl's names for deployments, with its own suffixes", () => {
    assert.equal(kindOfResource('deploy'), 'Deployment');
    assert.equal(kindOfResource('deployments.apps'), 'Deployment');
    assert.deepEqual([KINDS.Deployment.guardNameSuffix, KINDS.Deployment.eventSuffix], ['-deploy', 'deploy']);
  });

  it('finds the workload of a pod in one step, or through its ReplicaSet for a kind whose pods a ReplicaSet creates', () => {
    const daemonPod = { ownerReferences: [{ kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }] };
    assert.deepEqual(controllingWorkload(daemonPod), { kind: 'DaemonSet', name: 'agent', uid: 'ds-uid' });
    assert.deepEqual(
      controllingWorkload(pod, () => rsOf('Deployment')),
      { kind: 'Deployment', name: 'web', uid: 'Deployment-uid' },
    );
    assert.equal(controllingWorkload(pod), undefined, 'without a way to read the ReplicaSet');
    assert.equal(
      controllingWorkload(pod, () => undefined),
      undefined,
      'the ReplicaSet not known',
    );
    assert.equal(
      controllingWorkload(pod, () => ({})),
      undefined,
      'a ReplicaSet no workload controls',
    );
    assert.equal(
      controllingWorkload(pod, () => rsOf('DaemonSet')),
      undefined,
      'a kind whose pods no ReplicaSet creates',
    );
    assert.deepEqual(
      controllingWorkload(rsOf('Deployment')),
      { kind: 'Deployment', name: 'web', uid: 'Deployment-uid' },
      'a ReplicaSet itself',
    );
  });

  it("names the controller of each kind's pods", () => {
    assert.deepEqual(
      mapKinds((d) => podControllerKind(d.kind)),
      { DaemonSet: 'DaemonSet', StatefulSet: 'StatefulSet', Deployment: 'ReplicaSet' },
    );
  });

  it('undoes a Deployment from its ReplicaSets, with the right to patch Deployments and nothing to evict', () => {
    assert.equal(KINDS.Deployment.undo.from, 'ReplicaSet');
    assert.deepEqual(KINDS.Deployment.rbac.undo, [
      { group: 'apps', resource: 'deployments', verbs: ['patch'] },
      { group: 'argoproj.io', resource: 'rollouts', verbs: ['list'] },
    ]);
    // Each manager that may run it by reference is listed before an undo, under a right the undo role grants.
    for (const k of TARGET_KINDS)
      for (const m of KINDS[k].undo.referredBy)
        assert.ok(
          KINDS[k].rbac.undo.some(
            (r) => r.group === m.group && r.resource === m.resource && (r.verbs as readonly string[]).includes('list'),
          ),
        );
    assert.deepEqual(
      KINDS.Deployment.undo.referredBy.map((m) => m.kind),
      ['Rollout'],
    );
  });

  it("speaks kubectl get deploy's words", () => {
    assert.equal(
      KINDS.Deployment.words.columns({ desired: 3, ready: 2, updated: 1, available: 2 }),
      'kubectl get deploy shows READY 2/3, UP-TO-DATE 1, AVAILABLE 2',
    );
  });
});

describe('the kinds outside src/', () => {
  it("the CRDs' enums of kinds list exactly TARGET_KINDS, and allow as many as there are", () => {
    const files = ['config/crd', 'charts/rollout-guard/files/crds'].flatMap((d) =>
      readdirSync(join(ROOT, d))
        .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
        .map((f) => join(d, f)),
    );
    let enums = 0;
    const visit = (node: unknown, file: string, path: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, file, `${path}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a CRD schema is untyped YAML
      const o = node as Record<string, any>;
      const kindEnum = o.properties?.targetRef?.properties?.kind?.enum;
      if (kindEnum !== undefined) {
        enums++;
        assert.deepEqual(kindEnum, [...TARGET_KINDS], `${file} ${path}.targetRef.kind`);
      }
      const listed = o.properties?.targetKinds;
      if (listed !== undefined) {
        enums++;
        assert.deepEqual(listed.items?.enum, [...TARGET_KINDS], `${file} ${path}.targetKinds`);
        assert.equal(listed.maxItems, TARGET_KINDS.length, `${file} ${path}.targetKinds.maxItems`);
      }
      for (const [k, v] of Object.entries(o)) visit(v, file, `${path}.${k}`);
    };
    for (const file of files) for (const doc of parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))) visit(doc.toJS(), file, '');
    // Both copies of both CRDs: targetRef.kind, the selector guard's and the policy's targetKinds.
    assert.equal(enums, 6);
  });

  it("the RBAC files grant each kind's rights to observe it and to undo it", () => {
    const installs = [
      {
        observe: rulesOf('config/rbac/role.yaml', 'ClusterRole', 'rollout-guard'),
        undo: rulesOf('config/rbac/role.yaml', 'ClusterRole', 'rollout-guard-undo'),
      },
      {
        observe: rulesOf('config/namespaced/watched-namespace/role.yaml', 'Role', 'rollout-guard'),
        undo: rulesOf('config/namespaced/watched-namespace/undo.yaml', 'Role', 'rollout-guard-undo'),
      },
    ];
    for (const install of installs)
      for (const k of TARGET_KINDS) {
        for (const right of KINDS[k].rbac.observe) assert.ok(grants(install.observe, right), `${k}: observe ${JSON.stringify(right)}`);
        for (const right of KINDS[k].rbac.undo) assert.ok(grants(install.undo, right), `${k}: undo ${JSON.stringify(right)}`);
      }
  });
});

describe('kind names in src/', () => {
  const files = tsFiles(SRC).map((p) => ({ path: relative(SRC, p).split(sep).join('/'), text: readFileSync(p, 'utf8') }));

  it('tells per-kind files from the others', () => {
    assert.deepEqual(
      [
        'api/kinds.ts',
        'reconcile/targets/shared.ts',
        'reconcile/targets/daemonSet.ts',
        'k8s/slimStatefulSet.ts',
        'runtime/caches.ts',
        'cli/get.ts',
      ].map(perKindFile),
      [true, true, true, true, false, false],
    );
  });

  it('finds a kind named in code, and not in a comment, a sentence or a table key', () => {
    const text = [
      "// kind === 'DaemonSet'",
      "const a = kind === 'DaemonSet' ? 1 : 2;",
      'const b = kind ?? DAEMONSET_KIND;',
      "const c = 'the DaemonSet controller';",
      'const d: Record<TargetKind, number> = { DaemonSet: 1, StatefulSet: 2 };',
      'const e = kind !== `StatefulSet`;',
      "type F = 'RolloutGuard' | 'DaemonSet';",
    ].join('\n');
    assert.deepEqual(kindNamings('x.ts', text), [
      "x.ts:2 'DaemonSet'",
      'x.ts:3 DAEMONSET_KIND',
      'x.ts:6 `StatefulSet`',
      "x.ts:7 'DaemonSet'",
    ]);
  });

  it('finds the sources (the check below cannot pass on an empty tree)', () => {
    assert.ok(files.length >= 50, `source files found: ${files.length}`);
    assert.ok(files.some((f) => perKindFile(f.path) && kindNamings(f.path, f.text).length > 0));
  });

  it('names no kind outside the registry and the per-kind files (but the known ones, each still naming one)', () => {
    const named = files.filter((f) => !perKindFile(f.path)).flatMap((f) => kindNamings(f.path, f.text));
    assert.deepEqual(
      named.filter((n) => !(n.split(':')[0]! in KNOWN)),
      [],
      'look the kind up in src/api/kinds.ts instead',
    );
    const stale = Object.keys(KNOWN).filter((f) => !named.some((n) => n.startsWith(`${f}:`)));
    assert.deepEqual(stale, [], 'listed in KNOWN but no longer naming a kind: remove them from the list');
  });
});
