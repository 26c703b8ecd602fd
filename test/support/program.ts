/**
 * A program run to its end by a test, its output kept: the one way the suites that package, build or
 * install something (npm pack, npm run image, helm) run a command and read what it printed.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository (dist/test/support/ is three levels down). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** How a program ended: its exit code (null when a signal ended it) and what it printed. */
export interface ProgramResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` to its end in `cwd` (default the repository), killed after `limitMs`; never throws on a non-zero exit. */
export function runProgram(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; limitMs?: number } = {},
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.limitMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A result as an assertion message shows it. */
export const shownResult = (r: ProgramResult): string => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
