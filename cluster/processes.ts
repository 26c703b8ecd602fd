/**
 * The processes a cluster runs: their names, their pid files and logs, starting one detached, waiting
 * until it is ready, and stopping some. Facts about a pid are read from /proc: the harness signals only
 * processes it started, and a recycled pid must never be taken for one of them.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { paths } from './paths.js';
import { FatalWaitError, waitFor } from './wait.js';

/** Names of the processes the control plane consists of, in start order. */
export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
/** One of {@link COMPONENTS}. */
export type ComponentName = (typeof COMPONENTS)[number];

/**
 * A process the cluster tracks, with pid file `pids/<name>.pid` and log `logs/<name>.log`: one of the
 * {@link COMPONENTS}, or `kwok-<pool>`, an extra kwok that manages only the nodes annotated
 * `kwok.x-k8s.io/node=<pool>` (see {@link kwokInstanceName}).
 */
export type ProcessName = ComponentName | `kwok-${string}`;

// Lower-case DNS label: it ends up in a pid file name and in an annotation selector.
const KWOK_INSTANCE_RE = /^kwok-([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/;

/** The {@link ProcessName} of the extra kwok instance that manages the nodes annotated `kwok.x-k8s.io/node=<pool>`. */
export function kwokInstanceName(pool: string): ProcessName {
  const name = `kwok-${pool}` as const;
  if (!KWOK_INSTANCE_RE.test(name) || pool === 'fake')
    throw new Error(`${JSON.stringify(pool)} cannot name a kwok instance (lower-case DNS label, not "fake")`);
  return name;
}

/** `s` as a {@link ProcessName}, or undefined when it names neither a component nor a kwok instance. */
export function parseProcessName(s: string): ProcessName | undefined {
  if ((COMPONENTS as readonly string[]).includes(s)) return s as ComponentName;
  const m = KWOK_INSTANCE_RE.exec(s);
  return m && m[1] !== 'fake' ? (s as ProcessName) : undefined;
}

/** The executable a tracked process runs: the component itself, or `kwok` for a kwok instance. */
export function binaryOf(name: ProcessName): ComponentName {
  return (COMPONENTS as readonly string[]).includes(name) ? (name as ComponentName) : 'kwok';
}

/** How to run one tracked process and tell that it is ready. */
export interface ComponentSpec {
  name: ProcessName;
  args: string[];
  env?: NodeJS.ProcessEnv;
  ready: () => Promise<boolean>;
}

/** The process exists and is neither a zombie nor dead (running or frozen both count). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 follows the parenthesised command name; Z = zombie, X = dead.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** `pid` is alive and runs the executable named `binary` (its argv[0]'s base name). */
export function runsBinary(pid: number, binary: string): boolean {
  try {
    if (!isAlive(pid)) return false;
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(argv0) === binary;
  } catch {
    return false;
  }
}

/** A tracked process: its name (pid and log file) and pid. */
export interface Tracked {
  name: ProcessName;
  pid: number;
}

/** SIGTERM (and SIGCONT, for a frozen one) to each, then SIGKILL to those still alive after 10 s. */
export async function stopProcesses(procs: Tracked[], log: (line: string) => void): Promise<void> {
  if (procs.length === 0) return;
  for (const c of procs) {
    try {
      process.kill(c.pid, 'SIGTERM');
      // A test may have frozen it (SIGSTOP) and died before thawing it: a stopped process keeps SIGTERM
      // pending until SIGCONT, and would only go with the SIGKILL 10 s later.
      process.kill(c.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  const stillAlive = () => procs.filter((c) => isOurProcess(c.pid, c.name));
  try {
    await waitFor(() => stillAlive().length === 0, { timeoutMs: 10_000, intervalMs: 100, describe: 'components to exit' });
  } catch {
    for (const c of stillAlive()) {
      log(`${c.name} (pid ${c.pid}) ignored SIGTERM; sending SIGKILL`);
      try {
        process.kill(c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await waitFor(() => stillAlive().length === 0, { timeoutMs: 5_000, intervalMs: 100, describe: 'components to die' });
  }
  for (const c of procs) log(`stopped ${c.name} (pid ${c.pid})`);
}

/** Every process recorded in `pids/` (components and kwok instances); files of other names are ignored. */
export async function readPids(): Promise<Tracked[]> {
  const dir = paths().pids;
  if (!existsSync(dir)) return [];
  const out: Tracked[] = [];
  for (const f of await readdir(dir)) {
    if (!f.endsWith('.pid')) continue;
    const name = parseProcessName(f.slice(0, -'.pid'.length));
    if (!name) continue;
    const pid = Number((await readFile(path.join(dir, f), 'utf8')).trim());
    if (Number.isInteger(pid) && pid > 0) out.push({ name, pid });
  }
  return out;
}

/** True when `pid` is alive and runs the process's binary (a recycled pid must never be signalled). */
export function isOurProcess(pid: number, name: ProcessName): boolean {
  return runsBinary(pid, binaryOf(name));
}

/** Resident set size of `pid` in MiB, from /proc; undefined when it cannot be read. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** The log file a tracked process writes (stdout and stderr). */
export function logFile(name: ProcessName): string {
  return path.join(paths().logs, `${name}.log`);
}

/** The last `lines` lines of a tracked process's log, for error messages. */
export async function logTail(name: ProcessName, lines = 30): Promise<string> {
  try {
    const text = await readFile(logFile(name), 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts a tracked process detached, in its own session with its output in its log, and records its pid:
 * it must outlive the command that started it.
 */
export async function spawnComponent(spec: ComponentSpec, binDir: string): Promise<void> {
  const p = paths();
  const fd = openSync(logFile(spec.name), 'a');
  try {
    const child = spawn(path.join(binDir, binaryOf(spec.name)), spec.args, {
      cwd: p.dir,
      env: spec.env ?? process.env,
      // Own session and no pipes back to us: the process must survive the npm command that started it.
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (err) => reject(new Error(`cannot start ${spec.name}: ${err.message}`)));
    });
    child.unref();
    await writeFile(path.join(p.pids, `${spec.name}.pid`), `${pid}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Waits until `spec` reports ready, failing at once (with its log) when any tracked process exits. */
export async function waitReady(spec: ComponentSpec, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      await assertAllAlive();
      return spec.ready();
    },
    { timeoutMs, intervalMs: 200, describe: `${spec.name} to become ready` },
  ).catch(async (err: unknown) => {
    if (err instanceof Error && err.message.startsWith('timed out')) {
      throw new Error(`${err.message}\n--- last lines of ${logFile(spec.name)} ---\n${await logTail(spec.name)}`);
    }
    throw err;
  });
}

/** Fails the current wait as soon as a started component has exited, quoting its log. */
export async function assertAllAlive(): Promise<void> {
  for (const c of await readPids()) {
    // Just spawned by this process: alive is enough. Between fork and exec a child's cmdline is still its
    // parent's, so the binary-name check of isOurProcess (meant for pids left by an earlier run) would
    // read a child that has not exec'd yet as one that exited.
    if (!isAlive(c.pid)) {
      throw new FatalWaitError(
        new Error(`${c.name} (pid ${c.pid}) exited\n--- last lines of ${logFile(c.name)} ---\n${await logTail(c.name)}`),
      );
    }
  }
}
