/**
 * deploy/argocd/health.lua, the Argo CD health check of a RolloutGuard, run by a real Lua 5.1 interpreter
 * (Debian's lua5.1, from cluster/build.sh; Argo CD runs health checks in gopher-lua, which is Lua 5.1), the
 * way Argo CD runs it: the guard as the global `obj`, the script's chunk returning the health.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { buildBinaries } from '../../cluster/binaries.js';
import { ROOT } from '../../cluster/paths.js';

const SCRIPT = join(ROOT, 'deploy', 'argocd', 'health.lua');
let lua = '';

/** `v` as a Lua 5.1 table constructor (JSON null is a missing key, as Argo CD's conversion makes it). */
function toLua(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
  if (Array.isArray(v)) return `{${v.map(toLua).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== null && x !== undefined)
    .map(([k, x]) => `[${toLua(k)}] = ${toLua(x)}`)
    .join(', ')}}`;
}

/** Runs the health check on `obj`: Argo CD's status and message. */
function health(obj: Record<string, unknown>): { status: string; message: string } {
  const chunk = `obj = ${toLua(obj)}\nlocal hs = assert(loadfile(${toLua(SCRIPT)}))()\nio.write(hs.status, "\\t", hs.message or "")`;
  const r = spawnSync(lua, ['-e', chunk], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const [status = '', message = ''] = r.stdout.split('\t');
  return { status, message };
}

const guard = (
  status: Record<string, unknown> | undefined,
  o: { generation?: number; suspend?: boolean } = {},
): Record<string, unknown> => ({
  apiVersion: 'rolloutguard.dev/v1alpha1',
  kind: 'RolloutGuard',
  metadata: { name: 'decoder', namespace: 'team-a', generation: o.generation ?? 1 },
  spec: { targetRef: { kind: 'DaemonSet', name: 'decoder' }, ...(o.suspend ? { suspend: true } : {}) },
  ...(status ? { status: { observedGeneration: 1, ...status } } : {}),
});

describe('the Argo CD health check of a RolloutGuard (deploy/argocd/health.lua, Lua 5.1)', () => {
  before(async () => {
    lua = join(await buildBinaries({ log: () => undefined }), 'lua5.1');
    const v = spawnSync(lua, ['-v'], { encoding: 'utf8' });
    assert.match(`${v.stdout}${v.stderr}`, /^Lua 5\.1\.5/);
  });

  const cases: Array<{ name: string; obj: Record<string, unknown>; status: string; message: RegExp }> = [
    {
      name: 'Healthy',
      obj: guard({ state: 'Healthy', message: 'All 3 nodes on revision 2 (abc)' }),
      status: 'Healthy',
      message: /^All 3 nodes on revision 2/,
    },
    {
      name: 'Progressing',
      obj: guard({ state: 'Progressing', message: 'Rolling out revision 2: 1/3 updated' }),
      status: 'Progressing',
      message: /^Rolling out revision 2/,
    },
    {
      name: 'Suspect: no verdict yet',
      obj: guard({ state: 'Suspect', cause: 'ImagePullFailure', owner: 'Revision', message: 'no progress for 120s' }),
      status: 'Progressing',
      message: /^Suspect, cause ImagePullFailure, owner Revision: no progress/,
    },
    {
      name: 'Stalled: a verdict',
      obj: guard({ state: 'Stalled', cause: 'CrashLoop', owner: 'Revision', message: 'node-2 CrashLoopBackOff' }),
      status: 'Degraded',
      message: /^Stalled, cause CrashLoop, owner Revision: node-2 CrashLoopBackOff$/,
    },
    {
      name: 'Failed from crash evidence',
      obj: guard({ state: 'Failed', cause: 'CrashLoop', owner: 'Revision', message: 'crashed on 2 nodes' }),
      status: 'Degraded',
      message: /^Failed, cause CrashLoop/,
    },
    {
      name: 'RollingBack: the undo converging',
      obj: guard({ state: 'RollingBack', message: 'restored revision 1' }),
      status: 'Progressing',
      message: /^RollingBack: restored revision 1/,
    },
    {
      name: 'RolledBack: the release did not land',
      obj: guard({ state: 'RolledBack', message: 'Undo complete' }),
      status: 'Degraded',
      message: /^RolledBack: Undo complete/,
    },
    { name: 'no status yet', obj: guard(undefined), status: 'Progressing', message: /waiting for rollout-guard to judge/ },
    {
      name: 'a spec change not yet observed',
      obj: guard({ state: 'Healthy', message: 'old' }, { generation: 2 }),
      status: 'Progressing',
      message: /observe generation 2/,
    },
    { name: 'suspended', obj: guard({ state: 'Healthy' }, { suspend: true }), status: 'Suspended', message: /spec\.suspend is true/ },
    { name: 'a state this check does not know', obj: guard({ state: 'Unheard' }), status: 'Unknown', message: /^Unheard/ },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.status}`, () => {
      const got = health(tc.obj);
      assert.equal(got.status, tc.status);
      assert.match(got.message, tc.message);
    });
  }
});
