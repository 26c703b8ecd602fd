/**
 * The bench reads the operator's /metrics by name. A name it reads that the operator does not export
 * sums to 0 without an error, so a renamed metric would quietly turn a figure of the results into 0:
 * every `rollout_guard_*` name in bench/ must be one the registry exports.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Metrics } from '../../src/runtime/metrics.js';

/** This file runs as dist/test/bench/metricNames.test.js. */
const BENCH = fileURLToPath(new URL('../../../bench/', import.meta.url));

/** Names as a scrape shows them: a histogram's series carry a suffix. */
const SUFFIX = /_(bucket|sum|count)$/;

describe('bench: the operator metrics it reads', () => {
  it('are all exported by the operator', () => {
    const m = new Metrics(false);
    m.observeClockSkew(() => 0);
    m.observeInformers(() => []);
    const exported = new Set(m.registry.getMetricsAsArray().map((x) => (x as unknown as { name: string }).name));
    const read = new Set<string>();
    for (const f of readdirSync(BENCH).filter((n) => n.endsWith('.ts'))) {
      for (const [, name] of readFileSync(join(BENCH, f), 'utf8').matchAll(/'(rollout_guard_\w+)'/g)) read.add(name!);
    }
    assert.ok(read.has('rollout_guard_informer_watch_early_ends_total'), `the bench reads what it records: ${[...read].join(', ')}`);
    const unknown = [...read].filter((n) => !exported.has(n) && !(SUFFIX.test(n) && exported.has(n.replace(SUFFIX, ''))));
    assert.deepEqual(unknown, []);
  });
});
