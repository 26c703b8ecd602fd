/**
 * Failpoints: a test makes the operator exit with 137 at a point of its work, as a crash there would.
 * Preloaded into the operator's process with `node --import dist/test/support/failpoints.js` (see
 * ./operator.ts, option `failpoints`); it subscribes to the operator's diagnostics channels
 * (src/runtime/diagnostics.ts) and exits when the named point is reached. The points, comma-separated in
 * {@link FAILPOINTS_ENV}:
 *
 * - `exit-before-announcing=<Reason>`: a status write added an announcement of that Event reason; exit
 *   before the Event is sent;
 * - `exit-after-undo-patch`: an undo patch was applied; exit before its outcome is recorded in status.
 *
 * @module
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { DIAGNOSTICS_CHANNELS, type DiagnosticsMessages } from '../../src/runtime/diagnostics.js';
import { createLogger } from '../../src/runtime/logger.js';

/** The environment variable naming the failpoints of the process. */
export const FAILPOINTS_ENV = 'ROLLOUT_GUARD_FAILPOINTS';

/** A failpoint as named in {@link FAILPOINTS_ENV}. */
export type Failpoint = `exit-before-announcing=${string}` | 'exit-after-undo-patch';

/** The process's failpoints, from {@link FAILPOINTS_ENV}. */
function failpoints(env: NodeJS.ProcessEnv): string[] {
  return (env[FAILPOINTS_ENV] ?? '').split(',').filter(Boolean);
}

/** Subscribes to the channels of the failpoints named in `env`; a no-op when none is. */
export function installFailpoints(env: NodeJS.ProcessEnv = process.env): void {
  const points = failpoints(env);
  if (points.length === 0) return;
  const log = createLogger(env.LOG_LEVEL ?? 'info');
  const exit = (): never => {
    log.flush();
    process.exit(137);
  };

  const reason = points.find((f) => f.startsWith('exit-before-announcing='))?.split('=')[1];
  if (reason) {
    diagnostics_channel.subscribe(DIAGNOSTICS_CHANNELS.beforeAnnounce, (message) => {
      const m = message as DiagnosticsMessages['beforeAnnounce'];
      if (!m.announcements.some((a) => a.reason === reason)) return;
      log.warn({ reason }, 'failpoint exit-before-announcing: exiting before the Event is sent');
      exit();
    });
  }
  if (points.includes('exit-after-undo-patch')) {
    diagnostics_channel.subscribe(DIAGNOSTICS_CHANNELS.undoPatched, (message) => {
      const m = message as DiagnosticsMessages['undoPatched'];
      if (m.outcome.kind !== 'Applied') return;
      log.warn('failpoint exit-after-undo-patch: exiting before the outcome is recorded');
      exit();
    });
  }
}

// Loaded with `node --import`: subscribe in the process being started. Imported for its names (the
// harness), nothing is named in that process's environment and this does nothing.
installFailpoints();
