/**
 * The tracking phase (decide/track.ts) on facts a Deployment's adapter states: old pods still running
 * beside the updated ones (`outdated`) keep a rollout from complete, as `kubectl rollout status` waits for
 * them; and a pause by the workload's spec stops the clock of time without progress.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trackRollout } from '../../../src/domain/decide/track.js';
import type { TargetInput } from '../../../src/domain/decide/pass.js';
import type { GuardStatus } from '../../../src/api/types.js';
import type { Observation } from '../../../src/domain/observation.js';
import { HASH, T0, iso, pod, policy, run, sec } from '../../support/fixtures.js';
import { OLD_PODS, podUnit, rollingToB, settledOnA } from '../../support/deploymentRollout.js';

const GUARD = policy({ targetRef: { kind: 'Deployment', name: 'decoder' } });
const NEW_PODS = ['web-b-1', 'web-b-2', 'web-b-3'].map((n) => podUnit(n, pod({ hash: HASH.B })));

/** The status after A settled and B started (one new pod, pulling). */
function started(): GuardStatus {
  const ds = run(
    [
      { obs: settledOnA(), at: T0 },
      { obs: rollingToB([...OLD_PODS, podUnit('web-b-1', pod({ hash: HASH.B, ready: false }))]), at: T0 + sec(10) },
    ],
    { policy: GUARD },
  );
  return ds[ds.length - 1]!.status;
}

/** The tracking of `obs` at `at`, after the rollout started. */
function tracked(obs: Observation, at: number): ReturnType<typeof trackRollout> {
  if (obs.kind !== 'Target') throw new Error('not a target');
  const input: TargetInput = { obs, prev: started(), policy: GUARD, spec: GUARD.spec, now: at, nowIso: iso(at), cacheWaitMs: 0 };
  return trackRollout(input);
}

describe('track: old pods still running', () => {
  // Every replica updated and available, and one old pod not yet scaled away (a surge's).
  const cases: Array<[string, number | undefined, boolean]> = [
    ['one old pod left: not complete', 1, false],
    ['none left: complete', undefined, true],
    ['zero said as none: complete', 0, true],
  ];
  for (const [what, outdated, complete] of cases) {
    it(what, () => {
      const obs = rollingToB([...NEW_PODS, ...(outdated ? [OLD_PODS[0]!] : [])], {
        current: 3 + (outdated ?? 0),
        updated: 3,
        ready: 3 + (outdated ?? 0),
        available: 3 + (outdated ?? 0),
        outdated,
      });
      const t = tracked(obs, T0 + sec(60));
      assert.equal(t.complete || t.baking, complete, JSON.stringify({ complete: t.complete, baking: t.baking }));
    });
  }
});

describe('track: a pause by the workload spec', () => {
  it('restarts the clock of time without progress on every paused pass, progress or not', () => {
    const at = T0 + sec(500);
    const paused = tracked(
      rollingToB([...OLD_PODS, podUnit('web-b-1', pod({ hash: HASH.B, ready: false }))], { pausedBySpec: 'paused' }),
      at,
    );
    assert.equal(paused.rollout?.lastProgressAt, iso(at));
    assert.equal(paused.progressed, false, 'the pause is not progress: nothing is announced as resumed');
  });

  it('control: the same pass without the pause keeps the last progress', () => {
    const t = tracked(rollingToB([...OLD_PODS, podUnit('web-b-1', pod({ hash: HASH.B, ready: false }))]), T0 + sec(500));
    assert.equal(t.rollout?.lastProgressAt, iso(T0 + sec(10)));
  });
});
