/**
 * How the property tests run fast-check: a modest number of runs by default, FC_RUNS to run more (or
 * fewer), FC_SEED and FC_PATH to replay a reported failure (its seed and path are in the report), and a
 * coverage check so that a property cannot pass vacuously.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';

/** A property checked by {@link check}: `again()` checks it over as many fresh values once more. */
export interface Checked {
  again(): void;
}

/** Asserts `predicate` over `runs` values of `arb` (FC_RUNS overrides), replaying FC_SEED/FC_PATH when set. */
export function check<T>(arb: fc.Arbitrary<T>, runs: number, predicate: (value: T) => void): Checked {
  const seed = process.env['FC_SEED'];
  const path = process.env['FC_PATH'];
  const once = (): void =>
    fc.assert(fc.property(arb, predicate), {
      includeErrorInReport: true,
      numRuns: Number(process.env['FC_RUNS'] ?? runs),
      ...(seed !== undefined ? { seed: Number(seed) } : {}),
      ...(path !== undefined ? { path } : {}),
    });
  once();
  return { again: once };
}

/** More rounds {@link covered} may check a property over before it calls the coverage too little. */
const EXTRA_ROUNDS = 4;

/**
 * Asserts that the generated values exercised what a property is about: `min` of each count for
 * `defaultRuns` runs, scaled to FC_RUNS. Not when FC_PATH replays a single counterexample.
 *
 * With `checked`, a seed that happened to generate few of a rare case checks the property over fresh
 * values again (up to {@link EXTRA_ROUNDS} more rounds, the counts adding up) before it fails: the floor
 * is there so that a property cannot pass vacuously, not to fail on one seed's luck. A replayed seed
 * (FC_SEED) would generate the same values again, so it is never extended.
 */
export function covered(counts: Record<string, number>, min: Record<string, number>, defaultRuns: number, checked?: Checked): void {
  if (process.env['FC_PATH'] !== undefined) return;
  const scale = Number(process.env['FC_RUNS'] ?? defaultRuns) / defaultRuns;
  const short = (): Array<[string, number]> => Object.entries(min).filter(([k, m]) => (counts[k] ?? 0) < m * scale);
  if (checked && process.env['FC_SEED'] === undefined)
    for (let round = 0; round < EXTRA_ROUNDS && short().length > 0; round++) checked.again();
  for (const [k, m] of short()) assert.fail(`too little coverage: ${k} ${counts[k] ?? 0} < ${m * scale} (${JSON.stringify(counts)})`);
}
