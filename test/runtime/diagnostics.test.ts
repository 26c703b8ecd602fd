/**
 * The operator's diagnostics channels: a publish builds its message only for a subscriber; the failpoint
 * subscriber (test/support/failpoints.ts), preloaded with `node --import`, exits with 137 at its point
 * and only there, saying so in the operator's log format.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import diagnostics_channel from 'node:diagnostics_channel';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Announcement } from '../../src/api/types.js';
import { DIAGNOSTICS_CHANNELS, addedAnnouncements, publish, type DiagnosticsMessages } from '../../src/runtime/diagnostics.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FAILPOINTS = resolve(DIST, 'test/support/failpoints.js');
const DIAGNOSTICS = resolve(DIST, 'src/runtime/diagnostics.js');

const announcement = (id: string, reason: string): Announcement => ({
  id,
  at: '2026-12-01T10:00:00.000Z',
  type: 'Warning',
  reason,
  action: 'Detect',
  note: 'n',
  onTarget: false,
});

describe('diagnostics channels', () => {
  it('names each point once, under the rollout-guard: prefix', () => {
    const names = Object.values(DIAGNOSTICS_CHANNELS);
    assert.equal(new Set(names).size, names.length);
    for (const n of names) assert.match(n, /^rollout-guard:[a-z-]+$/);
  });

  it('without a subscriber the message is never built; with one, it is delivered', () => {
    let built = 0;
    const message = (): DiagnosticsMessages['undoPatched'] => {
      built++;
      return { namespace: 'ns', name: 'ds', outcome: { kind: 'Applied' } };
    };
    publish('undoPatched', message);
    assert.equal(built, 0);
    const seen: unknown[] = [];
    const onMessage = (m: unknown): void => {
      seen.push(m);
    };
    diagnostics_channel.subscribe(DIAGNOSTICS_CHANNELS.undoPatched, onMessage);
    try {
      publish('undoPatched', message);
    } finally {
      diagnostics_channel.unsubscribe(DIAGNOSTICS_CHANNELS.undoPatched, onMessage);
    }
    assert.equal(built, 1);
    assert.deepEqual(seen, [{ namespace: 'ns', name: 'ds', outcome: { kind: 'Applied' } }]);
  });

  it('addedAnnouncements: those of the new status whose id the old one did not have', () => {
    const a = announcement('a', 'RolloutSuspect');
    const b = announcement('b', 'RolloutStalled');
    assert.deepEqual(addedAnnouncements(undefined, [a, b]), [a, b]);
    assert.deepEqual(addedAnnouncements([a], [a, b]), [b]);
    assert.deepEqual(addedAnnouncements([a, b], [a]), []);
    assert.deepEqual(addedAnnouncements([a], undefined), []);
  });
});

/** Runs `script` (an ES module) in a node with the failpoint subscriber preloaded and `failpoints` named. */
function withFailpoints(failpoints: string, script: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', FAILPOINTS, '--input-type=module', '-e', script], {
      env: { ...process.env, ROLLOUT_GUARD_FAILPOINTS: failpoints, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', rej);
    child.on('exit', (code) => res({ code, stdout }));
  });
}

const publishing = (point: string, message: unknown): string =>
  `import { publish } from ${JSON.stringify(DIAGNOSTICS)}; publish(${JSON.stringify(point)}, () => (${JSON.stringify(message)})); console.log('went on');`;

describe('failpoints (test/support/failpoints.ts)', () => {
  it('exit-after-undo-patch: exits 137 after an applied patch, with the warning', async () => {
    const r = await withFailpoints(
      'exit-after-undo-patch',
      publishing('undoPatched', { namespace: 'ns', name: 'ds', outcome: { kind: 'Applied' } }),
    );
    assert.equal(r.code, 137);
    assert.doesNotMatch(r.stdout, /went on/);
    const line = JSON.parse(r.stdout.trim().split('\n')[0]!) as Record<string, unknown>;
    assert.equal(line.level, 'warn');
    assert.equal(line.msg, 'failpoint exit-after-undo-patch: exiting before the outcome is recorded');
  });

  it('exit-after-undo-patch: an undo that did not patch goes on', async () => {
    const r = await withFailpoints(
      'exit-after-undo-patch',
      publishing('undoPatched', { namespace: 'ns', name: 'ds', outcome: { kind: 'NotUndone', detail: 'x' } }),
    );
    assert.equal(r.code, 0);
    assert.match(r.stdout, /went on/);
  });

  it('exit-before-announcing=<Reason>: exits 137 only when a write adds an announcement of that reason', async () => {
    const other = await withFailpoints(
      'exit-before-announcing=RolloutStalled',
      publishing('beforeAnnounce', { namespace: 'ns', name: 'g', announcements: [announcement('a', 'RolloutSuspect')] }),
    );
    assert.equal(other.code, 0);
    assert.match(other.stdout, /went on/);
    const r = await withFailpoints(
      'exit-before-announcing=RolloutStalled',
      publishing('beforeAnnounce', { namespace: 'ns', name: 'g', announcements: [announcement('b', 'RolloutStalled')] }),
    );
    assert.equal(r.code, 137);
    const line = JSON.parse(r.stdout.trim().split('\n')[0]!) as Record<string, unknown>;
    assert.equal(line.reason, 'RolloutStalled');
    assert.equal(line.msg, 'failpoint exit-before-announcing: exiting before the Event is sent');
  });

  it('no failpoint named: the subscriber does nothing', async () => {
    const r = await withFailpoints('', publishing('undoPatched', { namespace: 'ns', name: 'ds', outcome: { kind: 'Applied' } }));
    assert.equal(r.code, 0);
    assert.match(r.stdout, /went on/);
  });
});
