#!/usr/bin/env node
// Runs every compiled test file with node's test runner, in two phases:
//   1. everything except the suites below, three files at a time (each e2e suite has its
//      own namespace and node pool on the shared local cluster);
//   2. one at a time, the suites whose timing-sensitive checks should not compete with three other suites
//      for two cores: those that run a private control plane (the fault and field-fault suites, the
//      fault-harness suite, the dead-nodes demo, and the real-node suite, whose kubelet and containers want
//      the CPU their real back-off timings assume; the fault suite restarts its API server and etcd), and
//      the suite that checks the shared control plane's own behaviour (cluster.test.js: beside the chart,
//      package and bench suites, the scheduler was seen to leave an unschedulable pod unexamined for 60 s).
// The runner's own summary is printed for each phase; the last line adds them up ("N passed, N failed",
// and ", N skipped" when any were), with cancelled and todo tests on stderr. No test file, or no test
// run, is a failure. Before that line, every failing test is printed again with its diagnostics, since a
// log is often read from its end and the failure may be thousands of lines above it.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ALONE = new Set([
  'dist/test/e2e/faults.test.js',
  'dist/test/e2e/harness.test.js',
  'dist/test/e2e/fieldFaults.test.js',
  'dist/test/e2e/demoNodes.test.js',
  'dist/test/e2e/cluster.test.js',
  'dist/test/e2e/realNode.test.js',
  'dist/test/e2e/install.test.js',
  'dist/test/e2e/crdSkew.test.js',
]);
// The suites that need no cluster: the pure logic, the adapters against local HTTP servers, the CLI's
// rendering, the cluster scripts' own rules, the image's agreement with the Dockerfile, the docs and the
// source's shape (`--unit`).
const UNIT = [
  'dist/test/api',
  'dist/test/domain',
  'dist/test/k8s',
  'dist/test/runtime',
  'dist/test/reconcile',
  'dist/test/cli',
  'dist/test/clusterBuild.test.js',
  'dist/test/clusterManifests.test.js',
  'dist/test/clusterNodes.test.js',
  'dist/test/clusterSettings.test.js',
  'dist/test/docs.test.js',
  'dist/test/image.test.js',
  'dist/test/layers.test.js',
  'dist/test/sourceSize.test.js',
];
const argv = process.argv.slice(2);
// optional: directories or files to restrict the run to, or --unit for the suites above
const only = argv.flatMap((a) => (a === '--unit' ? UNIT : [a]));

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? find(p) : p.endsWith('.test.js') ? [p] : [];
  });
}

const all = find('dist/test')
  .sort()
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)));
if (all.length === 0) {
  console.error(`no test file matches ${only.length > 0 ? only.join(' ') : 'dist/test/**/*.test.js'} (did the build run?)`);
  process.exit(1);
}
const phases = [
  { files: all.filter((f) => !ALONE.has(f)), concurrency: 3 },
  { files: all.filter((f) => ALONE.has(f)), concurrency: 1 },
].filter((p) => p.files.length > 0);

const totals = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
let code = 0;
const failures = [];
for (const phase of phases) {
  // TAP, whatever the Node: the totals are read from its closing lines (Node 24 defaults to the spec reporter).
  const args = ['--test', '--test-reporter=tap', `--test-concurrency=${phase.concurrency}`, '--test-timeout=900000', ...phase.files];
  const status = await new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = '';
    const reader = failureReader();
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      tail = (tail + d.toString()).slice(-4000);
      reader.push(d.toString());
    });
    child.on('exit', (c) => {
      failures.push(...reader.end());
      for (const k of Object.keys(totals)) {
        const m = new RegExp(`^# ${k} (\\d+)$`, 'm').exec(tail);
        if (m) totals[k] += Number(m[1]);
      }
      resolve(c ?? 1);
    });
  });
  if (status !== 0) code = status;
}
// A test cancelled because its suite's hook failed says nothing of its own: counted, not printed.
const cancelledWithParent = failures.filter((f) => f.includes("failureType: 'cancelledByParent'")).length;
const shown = failures.filter((f) => !f.includes("failureType: 'cancelledByParent'"));
if (shown.length > 0) {
  console.log(`\nfailed (${shown.length}${cancelledWithParent ? `, and ${cancelledWithParent} cancelled with their suite` : ''}):`);
  for (const f of shown) console.log(f);
}
const extra = [totals.cancelled ? `, ${totals.cancelled} cancelled` : '', totals.todo ? `, ${totals.todo} todo` : ''].join('');
console.log(
  `\ntests: ${totals.pass} passed, ${totals.fail + totals.cancelled} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`,
);
if (extra) console.error(`(of ${totals.tests}${extra})`);
// A run in which nothing ran is not a pass: a filter that matches no test, or files that define none.
if (totals.pass + totals.fail + totals.cancelled === 0) {
  console.error('no test ran');
  process.exit(1);
}
process.exit(code || (totals.fail + totals.cancelled > 0 ? 1 : 0));

// Collects, from a TAP stream, each `not ok` line with its YAML diagnostics block (error, location, stack),
// at most 60 lines each. A suite that fails because a subtest did is named too, after the subtest.
function failureReader() {
  const found = [];
  let partial = '';
  let open = null;
  const line = (l) => {
    if (open) {
      open.lines.push(l);
      if (l.trim() === '...' && l.search(/\S/) === open.indent + 2) {
        found.push(open.lines.slice(0, 60).join('\n'));
        open = null;
      }
      return;
    }
    const m = /^( *)not ok \d+ - /.exec(l);
    if (m) open = { indent: m[1].length, lines: [l] };
  };
  return {
    push(text) {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(line);
    },
    end() {
      if (partial) line(partial);
      if (open) found.push(open.lines.slice(0, 60).join('\n'));
      return found;
    },
  };
}
