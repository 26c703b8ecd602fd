/**
 * Gather (a kind's real adapter) → decide → persist, pass after pass over the frames of a simulated
 * rollout, from the guard's creation on: what the property tests of each kind run their properties over.
 * Each pass decides from a frozen copy of the observation and of the status the last pass persisted (as
 * read back from the API server), and commits the adapter's memory unless the decision is deferred.
 */
import { decide } from '../../src/domain/decide/decide.js';
import type { GuardPolicy } from '../../src/domain/decide/pass.js';
import type { GuardStatus, TargetKind } from '../../src/api/types.js';
import type { Decision } from '../../src/domain/decision.js';
import type { Observation } from '../../src/domain/observation.js';
import type { CacheView } from '../../src/reconcile/ports.js';
import { TargetMemory } from '../../src/reconcile/targetMemory.js';
import type { ObserveTarget } from '../../src/reconcile/targets/shared.js';
import { T0, deepFreeze, iso, roundTrip, sec, spec } from './fixtures.js';

/** One pass: its frame, the adapter's observation, the status it started from and the decision. */
export interface Pass<F> {
  i: number;
  frame: F;
  obs: Extract<Observation, { kind: 'Target' }>;
  prev: GuardStatus;
  decision: Decision;
}

/** What a simulation is of: the target, the guard's timings (a Report guard), and where it starts. */
export interface Simulated<F extends { at: number }> {
  kind: TargetKind;
  name: string;
  suspect: number;
  deadline: number;
  bakeSeconds: number;
  /** The frame at which the guard first sees the target. */
  firstSeen: number;
  /** The cache as the frame has it. */
  cacheOf: (frame: F) => CacheView;
  /** The kind's adapter (observeDeployment, observeStatefulSet, …) over that cache. */
  observe: ObserveTarget;
}

export function simulatePasses<F extends { at: number }>(sim: Simulated<F>, frames: readonly F[]): Array<Pass<F>> {
  const policy: GuardPolicy = deepFreeze({
    spec: spec({
      targetRef: { kind: sim.kind, name: sim.name },
      suspectAfterSeconds: sim.suspect,
      progressDeadlineSeconds: sim.deadline,
      bakeSeconds: sim.bakeSeconds,
      onStall: { action: 'Report' },
    }),
    generation: 1,
    name: `${sim.name}-guard`,
    createdAt: iso(T0 - sec(3600)),
  });
  const memory = new TargetMemory();
  let prev: GuardStatus = {};
  const passes: Array<Pass<F>> = [];
  frames.slice(Math.min(sim.firstSeen, frames.length - 1)).forEach((frame, i) => {
    const o = sim.observe(sim.cacheOf(frame), memory, 'ns', sim.name, frame.at, prev);
    if (o.kind !== 'Target') throw new Error(`not a Target observation at pass #${i}: ${JSON.stringify(o)}`);
    const decision = decide(deepFreeze(structuredClone(o)), deepFreeze(structuredClone(prev)), policy, frame.at);
    if (!decision.deferred) memory.commit();
    passes.push({ i, frame, obs: o, prev, decision });
    prev = roundTrip(decision.status);
  });
  return passes;
}
