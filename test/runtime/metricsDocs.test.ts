/**
 * The metrics table of docs/metrics.md against the registry: every metric the operator exports is listed, with
 * exactly the labels the code gives it, and the table lists nothing the code does not export. A label
 * added in code and not in the table (or the reverse) would send a dashboard author after a series
 * that does not exist.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Metrics } from '../../src/runtime/metrics.js';

/** This file runs as dist/test/runtime/metricsDocs.test.js. */
const METRICS_DOC = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'), 'docs', 'metrics.md');

/** `name{a,b}` → labels, from the rows of the docs/metrics.md table that start with a metric name. */
function documented(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of readFileSync(METRICS_DOC, 'utf8').matchAll(/^\| `(rollout_guard_\w+)(?:\{([^}]*)\})?` \|/gm)) {
    out.set(m[1]!, m[2] ? m[2].split(',').map((l) => l.trim()) : []);
  }
  return out;
}

/** Every metric of the registry with its label names. */
function exported(): Map<string, string[]> {
  const m = new Metrics(false);
  m.observeClockSkew(() => 0);
  m.observeInformers(() => []);
  const out = new Map<string, string[]>();
  for (const metric of m.registry.getMetricsAsArray()) {
    const name = (metric as unknown as { name: string }).name;
    const labels = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    if (name.startsWith('rollout_guard_')) out.set(name, [...labels]);
  }
  return out;
}

describe('docs/metrics.md metrics table', () => {
  it('lists every exported metric with the labels the code gives it, and no other', () => {
    const docs = documented();
    const code = exported();
    assert.ok(code.size > 10, 'the registry exports the operator metrics');
    assert.deepEqual([...docs.keys()].sort(), [...code.keys()].sort());
    for (const [name, labels] of code) assert.deepEqual(docs.get(name), labels, `labels of ${name}`);
  });
});
