/**
 * End to end: the API documents itself. Every spec and status field of RolloutGuard and
 * RolloutGuardPolicy carries a description in config/crd, and the API server publishes it, so
 * `kubectl explain` answers what a field means without the docs.
 *
 * 1. `kubectl explain <field>` against the real API server, for a sample of fields across both CRDs
 *    (spec, nested objects, enums, array items, status): its DESCRIPTION contains a distinctive phrase
 *    and equals the description in the CRD file. A description missing from what the server publishes
 *    shows as `<empty>` and fails.
 * 2. `kubectl explain <kind>.<spec|status> --recursive` names every field of the CRD file.
 * 3. A static walk of both CRD files: every property at every depth (through array `items`) has a
 *    non-empty description, except the few in {@link NO_DESCRIPTION_NEEDED}.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ensureCluster, kubectl } from '../support/cluster.js';
import { ROOT, installCrds } from '../support/operator.js';

interface Schema {
  description?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

const CRD_FILES = { rolloutguard: 'rolloutguards.yaml', rolloutguardpolicy: 'rolloutguardpolicies.yaml' } as const;
type Kind = keyof typeof CRD_FILES;

/**
 * Properties that need no description of their own, by path from the schema root. Explicit, so that
 * nothing is exempted silently.
 */
const NO_DESCRIPTION_NEEDED: ReadonlySet<string> = new Set([
  // Standard ObjectMeta: the API server publishes its own documentation in place of this stub.
  'metadata',
]);

/** A sample of fields and, for each, a phrase its description must contain. */
const SAMPLE: ReadonlyArray<{ field: string; phrase: string }> = [
  { field: 'rolloutguard.spec', phrase: 'the deadlines that turn a rollout Suspect and Stalled' },
  { field: 'rolloutguard.spec.targetRef', phrase: "in the guard's own namespace" },
  { field: 'rolloutguard.spec.onStall.action', phrase: 'the way `kubectl rollout undo` does' },
  { field: 'rolloutguard.spec.bakeSeconds', phrase: 'Default 180; 0 disables the bake' },
  { field: 'rolloutguard.status', phrase: 'through the status subresource' },
  { field: 'rolloutguard.status.state', phrase: 'Healthy with no rollout in flight' },
  { field: 'rolloutguard.status.owner', phrase: 'the only fault an undo fixes' },
  { field: 'rolloutguard.status.blockedNodes', phrase: 'a node that is down and still runs the old revision is listed too' },
  { field: 'rolloutguard.status.blockedNodes.reason', phrase: 'in the words of the kubelet, the scheduler or an Event' },
  {
    field: 'rolloutguard.status.rollout.lastProgressAt',
    phrase: 'Time without progress, compared with suspectAfterSeconds and progressDeadlineSeconds, counts from here',
  },
  { field: 'rolloutguard.status.undoSkipped.reason', phrase: "the operator's clock is more than 5 s off the API server's" },
  { field: 'rolloutguard.status.announcements', phrase: 'refused as AlreadyExists' },
  { field: 'rolloutguardpolicy.spec', phrase: 'owned by the policy' },
  { field: 'rolloutguardpolicy.spec.namespaceSelector', phrase: 'empty selects all namespaces' },
  { field: 'rolloutguardpolicy.spec.selector', phrase: 'never guarded by a policy' },
  { field: 'rolloutguardpolicy.spec.guard.bakeSeconds', phrase: 'Left out, the guard default 180' },
  { field: 'rolloutguardpolicy.status', phrase: "written by the operator's policy controller" },
  { field: 'rolloutguardpolicy.status.conflicts.winner', phrase: 'rolloutguardpolicy/<name>' },
];

const normalise = (s: string): string => s.replace(/\s+/g, ' ').trim();

async function loadSchema(kind: Kind): Promise<Schema> {
  const crd = parseYaml(await readFile(resolve(ROOT, 'config/crd', CRD_FILES[kind]), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
  };
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

/** Follows a `kubectl explain` path (`spec.onStall.action`) through the schema, into array items. */
function schemaAt(root: Schema, path: readonly string[]): Schema {
  let s = root;
  for (const name of path) {
    while (s.items) s = s.items;
    const next = s.properties?.[name];
    assert.ok(next, `no field ${path.join('.')} in the CRD file (at ${name})`);
    s = next;
  }
  return s;
}

/** Every property below `s`, as [path, schema], at every depth, through array items and map values. */
function properties(s: Schema, prefix: string): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = [];
  for (const [name, p] of Object.entries(s.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push([path, p], ...properties(p, path));
  }
  if (s.items) out.push(...properties(s.items, `${prefix}[]`));
  if (typeof s.additionalProperties === 'object') out.push(...properties(s.additionalProperties, `${prefix}{}`));
  return out;
}

/** The DESCRIPTION section of `kubectl explain` output, whitespace-normalised (`<empty>` when none). */
function descriptionOf(explain: string): string {
  const at = explain.indexOf('DESCRIPTION:');
  if (at < 0) return '';
  const rest = explain.slice(at + 'DESCRIPTION:'.length);
  const end = rest.search(/^FIELDS:/m);
  return normalise(end < 0 ? rest : rest.slice(0, end));
}

describe('kubectl explain: the API server publishes every description', () => {
  const schemas = new Map<Kind, Schema>();

  before(async () => {
    await ensureCluster();
    await installCrds();
    for (const kind of Object.keys(CRD_FILES) as Kind[]) schemas.set(kind, await loadSchema(kind));
  });

  it('shows the description written in config/crd for a sample of fields', async () => {
    // The server republishes its OpenAPI document shortly after a CRD changes: poll until then, with one
    // deadline for the whole sample, and assert on what it shows last.
    const deadline = Date.now() + 60_000;
    for (const { field, phrase } of SAMPLE) {
      const [kind, ...path] = field.split('.') as [Kind, ...string[]];
      const expected = normalise(schemaAt(schemas.get(kind)!, path).description ?? '');
      assert.ok(normalise(expected).includes(phrase), `config/crd: the description of ${field} lacks "${phrase}": ${expected}`);
      let shown = '';
      for (;;) {
        shown = descriptionOf((await kubectl(['explain', field])).stdout);
        if (shown === expected || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.ok(shown.includes(phrase), `kubectl explain ${field}: DESCRIPTION lacks "${phrase}"; it shows: ${shown}`);
      assert.equal(shown, expected, `kubectl explain ${field} shows a description other than the CRD file's`);
    }
  });

  it('lists every field of spec and status with --recursive', async () => {
    for (const kind of Object.keys(CRD_FILES) as Kind[]) {
      for (const top of ['spec', 'status']) {
        const out = (await kubectl(['explain', `${kind}.${top}`, '--recursive'])).stdout;
        const listed = new Set([...out.matchAll(/^\s+(\w+)\t/gm)].map((m) => m[1]));
        const missing = properties(schemaAt(schemas.get(kind)!, [top]), '')
          .map(([path]) => path.split('.').pop()!.replace(/\[\]$/, ''))
          .filter((name) => !listed.has(name));
        assert.deepEqual([...new Set(missing)], [], `kubectl explain ${kind}.${top} --recursive does not list: ${missing.join(', ')}`);
      }
    }
  });
});

describe('config/crd: every spec and status field has a description', () => {
  for (const kind of Object.keys(CRD_FILES) as Kind[]) {
    it(`${CRD_FILES[kind]}`, async (t) => {
      const root = await loadSchema(kind);
      assert.ok(root.properties?.spec && root.properties.status, `${CRD_FILES[kind]} has no spec or status`);
      const all = properties(root, '');
      const missing = all
        .filter(([path, s]) => !NO_DESCRIPTION_NEEDED.has(path) && (typeof s.description !== 'string' || s.description.trim() === ''))
        .map(([path]) => path);
      assert.deepEqual(missing, [], `${CRD_FILES[kind]}: ${missing.length} field(s) without a description:\n  ${missing.join('\n  ')}`);
      const described = all.filter(
        ([path]) => path === 'spec' || path === 'status' || path.startsWith('spec.') || path.startsWith('status.'),
      ).length;
      t.diagnostic(`${kind}: ${described} spec and status fields, all described`);
    });
  }
});
