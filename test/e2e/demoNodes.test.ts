/**
 * End to end: `npm run demo -- --story dead-nodes` in CI mode, judged only by the exit code and the
 * printed output, as demo.test.ts judges the default story. The story starts a private control plane of
 * its own (named after the namespace, so a developer's `--keep` run is never removed) and removes it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/operator.js';

const DEMO = path.join(ROOT, 'dist/demo/demo.js');

interface Run {
  code: number | null;
  out: string;
}

/** Runs the demo as `npm run demo` does (after the build), with CI=true; killed if it outlives `limitMs`. */
function demo(args: string[], limitMs = 270_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO, ...args], { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The output of every `$ kubectl …` block whose command line matches: from that line to the next blank line. */
function blocks(out: string, command: RegExp): string[] {
  const lines = out.split('\n');
  const found: string[] = [];
  lines.forEach((l, i) => {
    if (!l.startsWith('$ kubectl') || !command.test(l)) return;
    const end = lines.findIndex((x, j) => j > i && x.trim() === '');
    found.push(lines.slice(i + 1, end < 0 ? undefined : end).join('\n'));
  });
  assert.ok(found.length > 0, `no "$ kubectl ${String(command)}" block in the output`);
  return found;
}

/** Text between the `==> title` line and the next `==>` line. */
function sectionText(out: string, title: RegExp): string {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.startsWith('==> ') && title.test(l.slice(4)));
  assert.ok(i >= 0, `no "==> ${String(title)}" section`);
  const end = lines.findIndex((l, j) => j > i && l.startsWith('==> '));
  return lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
}

describe('npm run demo -- --story dead-nodes (CI mode)', () => {
  it(
    'kubelets die mid-rollout of a good image: Stalled, the nodes blamed, no undo; thawed, Healthy on revision 2',
    { timeout: 300_000 },
    async () => {
      const ns = 'rollout-guard-demo-test-nodes';
      const r = await demo(['--story', 'dead-nodes', '--namespace', ns]);
      const out = r.out;
      assert.equal(r.code, 0, out);
      assert.match(out, /^demo: OK \(dead-nodes\): the story completed as expected$/m, out);
      assert.ok(!out.includes('\u001b['), 'no terminal escape sequences in CI mode');

      // The narrated steps, in order.
      const steps = [
        /^==> Freezing the kubelets of dying-1, dying-2, then changing the image to registry\.local\/decoder:2, a good one$/m,
        /^\$ kill -STOP \d+ +# kwok-dying/m,
        /^\[ +\+\d+\.\ds\] the nodes dying-1, dying-2 turn Unknown: /m,
        /^\[ +\+\d+\.\ds\] event RolloutStalled \(Warning\)$/m,
        /^\[ +\+\d+\.\ds\] Stalled: NodeNotReady, the nodes are at fault \(owner Node: dying-[12](, dying-[12])?\); not undoing$/m,
        /^\[ +\+\d+\.\ds\] {3}undoSkipped NotTheRevision: .*an undo would not help$/m,
        /^==> Thawing the kubelets of dying-1, dying-2$/m,
        /^\[ +\+\d+\.\ds\] the nodes dying-1, dying-2 are Ready again/m,
        /^\[ +\+\d+\.\ds\] Healthy on revision 2 \(\w+\): every node runs registry\.local\/decoder:2; no undo was made$/m,
      ];
      let at = 0;
      for (const step of steps) {
        const m = step.exec(out.slice(at));
        assert.ok(m, `missing, or out of order: ${String(step)}\n${out}`);
        at += m.index + m[0].length;
      }
      assert.match(out, /^\[ +\+\d+\.\ds\] event UndoSkipped \(Warning\)$/m);
      assert.match(out, /^\[ +\+\d+\.\ds\] guard Stalled \(NodeNotReady\) +DESIRED /m);
      assert.doesNotMatch(out, /event UndoStarted|\] guard (RollingBack|RolledBack)/);

      // The real kubectl output while stalled: the dead nodes, the guard blaming them, its skipped undo.
      const stalled = sectionText(out, /^What kubectl shows while it is stalled$/);
      assert.match(blocks(stalled, / get nodes /)[0]!, /^dying-1\s+NotReady\s/m);
      assert.match(blocks(stalled, / get nodes /)[0]!, /^steady-1\s+Ready\s/m);
      assert.match(blocks(stalled, / get rg /)[0]!, /^decoder\s+decoder\s+DaemonSet\s+Stalled\s+\d+\s+\d+\s+\d+\s+NodeNotReady\s+Node\s/m);
      const described = blocks(stalled, / describe rg decoder .*sed/)[0]!;
      assert.match(described, /^Status:/);
      assert.match(described, /^ {2}Owner:\s+Node$/m);
      assert.match(described, /^ {2}Undo Skipped:\n\s+Message:\s+.*an undo would not help\n\s+Reason:\s+NotTheRevision$/m);
      assert.match(described, /^Events:$/m);
      assert.match(described, /Warning\s+UndoSkipped\s/);

      // The end: Healthy on 4/4, the template on the good image, and the Events.
      const now = sectionText(out, /^What kubectl shows now$/);
      assert.match(blocks(now, / get rg /)[0]!, /^decoder\s+decoder\s+DaemonSet\s+Healthy\s+4\s+4\s+4\s/m);
      assert.match(blocks(now, / get ds /)[0]!, /^decoder\s+4\s+4\s+4\s+4\s+4\s.*registry\.local\/decoder:2\s/m);
      const events = blocks(out, / get events /)[0]!;
      assert.match(events, /UndoSkipped\s+rolloutguard\/decoder/);
      assert.match(events, /UndoSkipped\s+daemonset\/decoder/);
      assert.match(events, /RolloutComplete\s+rolloutguard\/decoder/);
      assert.doesNotMatch(events, /UndoStarted/);

      assert.match(out, /Stalled at \+\d+\.\d s with cause NodeNotReady, owner Node, naming dying-/);
      const detection = Number(/^detection time \(Stalled − image change\): (\d+\.\d) s$/m.exec(out)?.[1]);
      // progressDeadlineSeconds 25, counted from the rollout's last progress (within the first few seconds).
      assert.ok(detection >= 25 && detection < 45, `detection took ${detection} s`);
      const healed = Number(/^time to Healthy on revision 2 after the thaw: (\d+\.\d) s$/m.exec(out)?.[1]);
      assert.ok(healed > 0 && healed < 60, `Healthy ${healed} s after the thaw`);

      // It cleaned up after itself: no control plane left behind.
      assert.match(out, /private control plane stopped and .*\.cluster-demo-nodes-rollout-guard-demo-test-nodes removed/);
      assert.ok(!existsSync(path.join(ROOT, `.cluster-demo-nodes-${ns}`)), 'the private cluster directory is gone');
    },
  );

  it('refuses flags the story cannot honour, with exit 2 and the usage', async () => {
    const external = await demo(['--story', 'dead-nodes', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(external.code, 2, external.out);
    assert.match(external.out, /--story dead-nodes cannot run on an existing cluster \(--kubeconfig\): it freezes kubelets/);
    assert.match(external.out, /usage: npm run demo/);
    const action = await demo(['--action', 'Report', '--story', 'dead-nodes']);
    assert.equal(action.code, 2, action.out);
    assert.match(action.out, /--action: only for --story broken-image/);
  });
});
