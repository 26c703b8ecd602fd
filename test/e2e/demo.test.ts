/**
 * End to end: `npm run demo` in CI mode, both variants of the default story, the statefulset story and
 * the deployment story (the dead-nodes story is demoNodes.test.ts's, the real-node ones realNode.test.ts's), as a newcomer's
 * first command would run it.
 * Judged only by the exit code and the printed output. The two variants run one after the other, in
 * namespaces of their own, so a developer's `npm run demo` (namespace rollout-guard-demo) is never
 * disturbed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { EXTERNAL_KUBECONFIG_ENV } from '../../cluster/controlPlane.js';
import { ensureCluster, kubectl } from '../support/cluster.js';
import { ROOT } from '../support/operator.js';

const DEMO = path.join(ROOT, 'dist/demo/demo.js');

interface Run {
  code: number | null;
  out: string;
}

/** Runs the demo as `npm run demo` does (after the build), with CI=true; killed if it outlives `limitMs`. */
function demo(args: string[], limitMs = 270_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const external = process.env[EXTERNAL_KUBECONFIG_ENV];
    const child = spawn(process.execPath, [DEMO, ...args, ...(external ? ['--kubeconfig', external] : [])], {
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The output of one `$ kubectl …` block: from its command line to the next blank line. */
function block(out: string, command: RegExp): string {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.startsWith('$ kubectl') && command.test(l));
  assert.ok(i >= 0, `no "$ kubectl ${String(command)}" block in the output`);
  const end = lines.findIndex((l, j) => j > i && l.trim() === '');
  return lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
}

/** The whole output of one `$ kubectl …` command whose output has blank lines (`get deploy,rs,pods`): up to the next command or section. */
function fullBlock(out: string, command: RegExp): string {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.startsWith('$ kubectl') && command.test(l));
  assert.ok(i >= 0, `no "$ kubectl ${String(command)}" block in the output`);
  const end = lines.findIndex((l, j) => j > i && (l.startsWith('$ kubectl') || l.startsWith('==> ')));
  return lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
}

async function namespaceGone(ns: string): Promise<boolean> {
  const r = await kubectl(['get', 'namespace', ns], { allowFail: true });
  return r.code !== 0 && /NotFound/.test(r.stderr);
}

describe('npm run demo (CI mode)', () => {
  before(async () => {
    // Started (or reused) here so the demo finds it running and, as it says, leaves it running.
    await ensureCluster();
  });

  it('Undo: stalls on one node, is detected with its cause, and is undone to one generation', { timeout: 300_000 }, async () => {
    const ns = 'rollout-guard-demo-test-undo';
    const r = await demo(['--namespace', ns]);
    const out = r.out;
    assert.equal(r.code, 0, out);
    assert.match(out, /^demo: OK \(Undo\): the story completed as expected$/m, out);

    // The live view: plain timestamped lines, one per change, the blocked node on revision 2.
    assert.match(out, /^\[ +\+\d+\.\ds\] guard Suspect \(ImagePullFailure\) /m);
    assert.match(out, /^\[ +\+\d+\.\ds\] event RolloutStalled \(Warning\)$/m);
    assert.ok(!out.includes('\u001b['), 'no terminal escape sequences in CI mode');

    // The real kubectl output.
    assert.match(block(out, / get rg /), /^decoder\s+decoder\s+DaemonSet\s+RolledBack\s+3\s+3\s+3\s/m);
    assert.match(block(out, / get ds /), /^decoder\s+3\s+3\s+3\s+3\s+3\s/m);
    assert.match(block(out, / describe rg /), /State:\s+RolledBack/);
    const events = block(out, / get events /);
    assert.match(events, /RolloutStalled\s+rolloutguard\/decoder/);
    assert.match(events, /UndoComplete\s+rolloutguard\/decoder/);

    // The summary names the node that blocked the rollout, the same one the live view showed.
    const m = /it started on (node-[123]), where the new pod never became ready: ImagePullBackOff/.exec(out);
    assert.ok(m, `the summary names the blocked node\n${out}`);
    assert.match(out, new RegExp(`${m[1]} rev 2 ImagePullBackOff`));
    assert.match(out, /Stalled at \+\d+\.\d s with cause ImagePullFailure/);
    const detection = Number(/^detection time \(Stalled − image change\): (\d+\.\d) s$/m.exec(out)?.[1]);
    // progressDeadlineSeconds 20, counted from the last progress: the first new pod, which a loaded control
    // plane may take several seconds to create. The guard's part is the time from that progress to Stalled
    // (the progress time has a second's precision).
    const idle = Number(/^time without progress at the verdict \(Stalled − last progress\): (\d+\.\d) s$/m.exec(out)?.[1]);
    assert.ok(idle >= 19 && idle < 25, `Stalled ${idle} s after the last progress`);
    assert.ok(detection >= 20 && detection < 40, `detection took ${detection} s`);
    const oneGen = Number(/^time to one generation again \(from the image change\): (\d+\.\d) s$/m.exec(out)?.[1]);
    assert.ok(oneGen >= detection && oneGen < detection + 30, `one generation again at ${oneGen} s`);

    assert.match(out, /the local cluster was already running before the demo and is left running|^==> Using the cluster in /m);
    assert.ok(await namespaceGone(ns), 'the demo deleted its namespace');
  });

  it('Report: stalls and is reported with its cause and an undo plan, nothing changed', { timeout: 300_000 }, async () => {
    const ns = 'rollout-guard-demo-test-report';
    const r = await demo(['--action', 'Report', '--namespace', ns]);
    const out = r.out;
    assert.equal(r.code, 0, out);
    assert.match(out, /^demo: OK \(Report\): the story completed as expected$/m, out);

    assert.match(block(out, / get rg /), /^decoder\s+decoder\s+DaemonSet\s+Stalled\s+3\s+1\s+2\s+ImagePullFailure\s/m);
    assert.match(block(out, / get ds /), /^decoder\s+3\s+3\s+2\s+1\s+2\s/m);
    assert.match(block(out, / describe rg /), /Would restore revision 1 \(\w+\) on 1 node/);
    assert.match(block(out, / describe rg /), /Dry Run:\s+Accepted/);
    const events = block(out, / get events /);
    assert.match(events, /RolloutStalled\s+rolloutguard\/decoder/);
    assert.doesNotMatch(events, /UndoStarted/);

    const m = /it started on (node-[123]), where the new pod never became ready: ImagePullBackOff/.exec(out);
    assert.ok(m, `the summary names the blocked node\n${out}`);
    assert.match(out, /With onStall\.action Report the guard changed nothing/);
    assert.match(out, new RegExp(`kubectl rollout undo ds/decoder -n ${ns} --to-revision=1`));
    assert.ok(await namespaceGone(ns), 'the demo deleted its namespace');
  });

  it(
    'statefulset: kubectl rollout undo leaves the broken pod stuck; the guard, set to Undo, evicts it and the StatefulSet is whole',
    { timeout: 300_000, skip: process.env[EXTERNAL_KUBECONFIG_ENV] ? 'the story runs on the local control plane only' : false },
    async () => {
      const ns = 'rollout-guard-demo-test-sts';
      const r = await demo(['--story', 'statefulset', '--namespace', ns]);
      const out = r.out;
      assert.equal(r.code, 0, out);
      assert.match(out, /^demo: OK \(statefulset\): the story completed as expected$/m, out);
      // The Report guard named both commands; the first, run by hand, left store-2 stuck and rollout status timed out.
      assert.match(
        out,
        new RegExp(`kubectl rollout undo statefulset/store -n ${ns} --to-revision=1, then kubectl delete pod store-2 -n ${ns}`),
      );
      assert.match(block(out, / rollout undo /), /statefulset.apps\/store rolled back/);
      assert.match(out, /^\$ kubectl rollout status statefulset\/store --timeout=20s/m);
      assert.match(out, /timed out waiting for the condition/);
      assert.match(out, /Reverted by a person or tool to .*, but store-2 is still on .* and not Ready/);
      // Then the guard finished it: the pod evicted, the StatefulSet on one revision, rollout status complete.
      assert.match(out, /partitioned roll out complete|rolling update complete/);
      assert.match(block(out, / get sts /), /^store\s+3\/3\s/m);
      const events = block(out, / get events /);
      assert.match(events, /PodEvicted\s+rolloutguard\/store\s+Evicted store-2: it was not Ready on the undone revision/);
      assert.doesNotMatch(events, /UndoStarted/);
      assert.ok(await namespaceGone(ns), 'the demo deleted its namespace');
    },
  );

  it(
    'deployment: stalls on an image that cannot be pulled, is undone, and the old ReplicaSet serves all 3 pods again',
    { timeout: 300_000, skip: process.env[EXTERNAL_KUBECONFIG_ENV] ? 'the story runs on the local control plane only' : false },
    async () => {
      const ns = 'rollout-guard-demo-test-deploy';
      const r = await demo(['--story', 'deployment', '--namespace', ns]);
      const out = r.out;
      assert.equal(r.code, 0, out);
      assert.match(out, /^demo: OK \(deployment\): the story completed as expected$/m, out);
      assert.ok(!out.includes('\u001b['), 'no terminal escape sequences in CI mode');

      // The live view: the one surge pod of the new ReplicaSet cannot pull its image; the guard says so.
      assert.match(out, /^\[ +\+\d+\.\ds\] guard (Suspect|Stalled) \(ImagePullFailure\) /m);
      assert.match(out, /^\[ +\+\d+\.\ds\] event RolloutStalled \(Warning\)$/m);
      assert.match(out, /^\[ +\+\d+\.\ds\] event UndoComplete \(Normal\)$/m);
      assert.match(out, /Stalled at \+\d+\.\d s \(cause ImagePullFailure, owner Revision\)/);
      const stalled = Number(/^detection time \(Stalled − image change\): (\d+\.\d) s$/m.exec(out)?.[1]);
      assert.ok(stalled >= 20 && stalled < 35, `Stalled ${stalled} s after the image change`);
      const rolledBack = Number(/^time to RolledBack \(from the image change\): (\d+\.\d) s$/m.exec(out)?.[1]);
      assert.ok(rolledBack >= stalled && rolledBack < stalled + 30, `RolledBack ${rolledBack} s after the image change`);

      // The real kubectl output: the Deployment whole on the good image, the old ReplicaSet at 3, the broken one at 0.
      const objects = fullBlock(out, / get deploy,rs,pods /);
      assert.match(objects, /^deployment\.apps\/web\s+3\/3\s+3\s+3\s.*registry\.local\/web:1\s/m);
      assert.match(objects, /^replicaset\.apps\/web-\w+\s+3\s+3\s+3\s.*registry\.local\/web:1\s/m);
      assert.match(objects, /^replicaset\.apps\/web-\w+\s+0\s+0\s+0\s.*registry\.local\/web:2-broken\s/m);
      assert.equal((objects.match(/^pod\/web-\S+\s+1\/1\s+Running\s/gm) ?? []).length, 3, objects);
      assert.match(block(out, / get rg /), /^web\s+web\s+Deployment\s+RolledBack\s/m);
      assert.match(block(out, / describe rg /), /State:\s+RolledBack/);
      assert.match(out, /deployment "web" successfully rolled out/);
      const events = block(out, / get events /);
      assert.match(events, /RolloutStalled\s+rolloutguard\/web/);
      assert.equal((events.match(/UndoStarted\s+rolloutguard\/web/g) ?? []).length, 1, events);
      assert.match(events, /UndoComplete\s+rolloutguard\/web/);
      // The guard speaks of a Deployment: its messages in the live view and its Events say nothing of a DaemonSet.
      const said = [...out.matchAll(/^\[ +[+-]\d+\.\ds\] {3}guard: (.*)$/gm)].map((m) => m[1]).join('\n');
      assert.ok(said.length > 0, "the live view shows the guard's messages");
      assert.doesNotMatch(`${said}\n${events}`, /DaemonSet|kubectl get ds\b/);
      assert.ok(await namespaceGone(ns), 'the demo deleted its namespace');
    },
  );

  it('rejects bad flags with exit 2 and the usage', async () => {
    const r = await demo(['--action', 'Rollback']);
    assert.equal(r.code, 2, r.out);
    assert.match(r.out, /--action wants Undo or Report/);
    assert.match(r.out, /usage: npm run demo/);
    const story = await demo(['--story', 'nope']);
    assert.equal(story.code, 2, story.out);
    assert.match(story.out, /--story wants broken-image, dead-nodes, real-node, statefulset, deployment, got "nope"/);
    assert.match(story.out, /usage: npm run demo/);
    const real = await demo(['--story', 'real-node', '--image', 'registry.local/other:1']);
    assert.equal(real.code, 2, real.out);
    assert.match(real.out, /--image(, --kubeconfig)?: not for --story real-node, which runs its own images on the local real node/);
    const sts = await demo(['--story', 'statefulset', '--action', 'Report']);
    assert.equal(sts.code, 2, sts.out);
    assert.match(sts.out, /--action: not for --story statefulset/);
    const misplaced = await demo(['--real-node']);
    assert.equal(misplaced.code, 2, misplaced.out);
    assert.match(misplaced.out, /--real-node: only for --story statefulset/);
    const deploy = await demo(['--story', 'deployment', '--image', 'registry.local/other:1']);
    assert.equal(deploy.code, 2, deploy.out);
    assert.match(deploy.out, /--image(, --kubeconfig)?: not for --story deployment|--story deployment runs on the local control plane/);
  });
});
