/**
 * How the property tests run fast-check: a modest number of runs by default, FC_RUNS to run more (or
 * fewer), FC_SEED and FC_PATH to replay a reported failure (its seed and path are in the report), and a
 * coverage check so that a property cannot pass vacuously.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';

/** Asserts `predicate` over `runs` values of `arb` (FC_RUNS overrides), replaying FC_SEED/FC_PATH when set. */
export function check<T>(arb: fc.Arbitrary<T>, runs: number, predicate: (value: T) => void): void {
  const seed = process.env['FC_SEED'];
  const path = process.env['FC_PATH'];
  fc.assert(fc.property(arb, predicate), {
    includeErrorInReport: true,
    numRuns: Number(process.env['FC_RUNS'] ?? runs),
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
    ...(path !== undefined ? { path } : {}),
  });
}

/**
 * Asserts that the generated values exercised what a property is about: `min` of each count for
 * `defaultRuns` runs, scaled to FC_RUNS. Not when FC_PATH replays a single counterexample.
 */
export function covered(counts: Record<string, number>, min: Record<string, number>, defaultRuns: number): void {
  if (process.env['FC_PATH'] !== undefined) return;
  const scale = Number(process.env['FC_RUNS'] ?? defaultRuns) / defaultRuns;
  for (const [k, m] of Object.entries(min))
    assert.ok((counts[k] ?? 0) >= m * scale, `too little coverage: ${k} ${counts[k] ?? 0} < ${m * scale} (${JSON.stringify(counts)})`);
}
