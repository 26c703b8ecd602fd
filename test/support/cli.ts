/**
 * The rollout-guard CLI run as a person runs it: the built entry point as a child process against the
 * shared cluster, killed after a limit so a hung command fails its test instead of hanging it.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { kubeconfigPath } from './cluster.js';
import { ROOT } from './operator.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `rollout-guard ARGS…` (dist/src/main.js) to its end. */
export function runCli(args: readonly string[], limitMs = 90_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'dist/src/main.js'), ...args],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath() }, timeout: limitMs },
      (err, stdout, stderr) => {
        const code = err && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : err ? -1 : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The result as a failed assertion shows it. */
export const shown = (r: CliResult): string => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
