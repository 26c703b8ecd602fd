/**
 * The operator as a child process (`node dist/src/main.js run`), as the demo, the bench and the tests run
 * it. The harness picks two free loopback ports itself and passes them as `--metrics-bind-address` and
 * `--health-probe-bind-address`, then polls the probe port until it answers 200 (`/readyz` by default:
 * caches synced). That answer is the ready signal; nothing is read from the operator's log.
 *
 * A port picked free may be taken by another process before the operator binds it; the operator then
 * exits with EADDRINUSE and the start is retried on other ports.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setPriority } from 'node:os';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './paths.js';
import { freePort } from './ports.js';
import { FatalWaitError, waitFor } from './wait.js';

/** The operator's entry point, as tsc emits it. */
export const OPERATOR_MAIN = path.join(ROOT, 'dist/src/main.js');

/** Options of {@link OperatorChild.start}. */
export interface OperatorChildOptions {
  /** Arguments after `run`, without the two listeners (the harness sets them). */
  args: readonly string[];
  /** Node's own options, before the entry point (e.g. `--import <module>`). */
  nodeArgs?: readonly string[];
  /** The child's environment; default this process's. */
  env?: NodeJS.ProcessEnv;
  /** Serve /metrics (default true); false passes `--metrics-bind-address=0`. */
  metrics?: boolean;
  /** The probe that says ready: `/readyz` (default: caches synced) or `/healthz` (the process serves). */
  readyPath?: '/readyz' | '/healthz';
  /** How long to wait for the ready answer; default 30 s. */
  timeoutMs?: number;
  /**
   * Where the output goes. `pipe` (default): read here, line by line ({@link OperatorChild.logs},
   * `onLine`). A file path: stdout and stderr are written straight to it, so the output does not depend
   * on this process (with `detached`, the operator may outlive it).
   */
  output?: 'pipe' | { file: string };
  /** Called with each output line (`pipe` only). */
  onLine?: (line: string) => void;
  /** Called with each raw chunk of output (`pipe` only), e.g. to keep the whole log in a file. */
  onChunk?: (chunk: Buffer) => void;
  /** At most this many lines are kept in {@link OperatorChild.logs}; default all. */
  keepLines?: number;
  /** Its own process group: a Ctrl-C on the terminal reaches this process only. */
  detached?: boolean;
  /**
   * Its scheduling priority (nice, -20 to 19), set as soon as it is spawned. Below 0 needs root. On a
   * shared machine this stands in for a pod's CPU request: the operator gets its share when the control
   * plane beside it saturates the cores.
   */
  priority?: number;
}

/** How many times a start is tried when the picked ports turn out to be taken. */
const PORT_ATTEMPTS = 3;

/** A running operator child process and the two ports it serves on. */
export class OperatorChild {
  /** Output lines (`pipe` output only; see {@link OperatorChildOptions.keepLines}). */
  readonly logs: string[] = [];
  /** Resolves with the exit code when the process exits (null when a signal ended it: see {@link exitSignal}). */
  readonly exited: Promise<number | null>;
  private code: number | null | undefined;
  private endSignal: NodeJS.Signals | null = null;

  private constructor(
    readonly child: ChildProcess,
    /** Port of /metrics; null when metrics are off. */
    readonly metricsPort: number | null,
    /** Port of /healthz and /readyz. */
    readonly probePort: number,
    private readonly o: OperatorChildOptions,
  ) {
    if (o.output === undefined || o.output === 'pipe') {
      let buf = '';
      const onData = (d: Buffer): void => {
        o.onChunk?.(d);
        buf += d.toString();
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          this.logs.push(line);
          if (o.keepLines !== undefined && this.logs.length > o.keepLines) this.logs.shift();
          o.onLine?.(line);
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
    }
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.code = code;
        this.endSignal = signal;
        resolve(code);
      }),
    );
  }

  /**
   * Spawns the operator on two free loopback ports and waits until the probe answers 200. Throws with the
   * tail of its output when it exits first or does not answer in time.
   */
  static async start(o: OperatorChildOptions): Promise<OperatorChild> {
    for (let attempt = 1; ; attempt++) {
      const op = await OperatorChild.spawn(o);
      try {
        await op.waitReady(o.readyPath ?? '/readyz', o.timeoutMs ?? 30_000);
        return op;
      } catch (e) {
        const tail = await op.tail(40);
        if (op.exitCode !== undefined && attempt < PORT_ATTEMPTS && tail.includes('EADDRINUSE')) continue;
        if (op.exitCode === undefined) {
          op.child.kill('SIGKILL');
          await op.exited;
        }
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- operator log ---\n${tail}`);
      }
    }
  }

  private static async spawn(o: OperatorChildOptions): Promise<OperatorChild> {
    const metrics = o.metrics ?? true;
    const probePort = await freePort();
    let metricsPort = metrics ? await freePort() : null;
    // Two calls may return the same port once the first one's listener is closed.
    while (metricsPort === probePort) metricsPort = await freePort();
    const args = [
      // As the image starts it: the idle collector needs a collection it can call (runtime/idleCollector.ts).
      '--expose-gc',
      ...(o.nodeArgs ?? []),
      OPERATOR_MAIN,
      'run',
      ...o.args,
      `--metrics-bind-address=${metricsPort === null ? '0' : `127.0.0.1:${metricsPort}`}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
    ];
    const file = typeof o.output === 'object' ? o.output.file : undefined;
    const fd = file ? openSync(file, 'w') : undefined;
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, args, {
        env: o.env ?? process.env,
        detached: o.detached ?? false,
        stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
      });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    if (o.priority !== undefined && child.pid !== undefined) {
      try {
        setPriority(child.pid, o.priority);
      } catch (e) {
        child.kill('SIGKILL'); // an operator not run as asked must not measure anything
        throw e;
      }
    }
    return new OperatorChild(child, metricsPort, probePort, o);
  }

  /** Polls `readyPath` on the probe port until it answers 200; throws if the process exits first. */
  async waitReady(readyPath: '/readyz' | '/healthz' = '/readyz', timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        if (this.code !== undefined) {
          throw new FatalWaitError(new Error(`the operator exited with ${this.code ?? this.endSignal} before ${readyPath} answered 200`));
        }
        return (await this.get(readyPath)).status === 200;
      },
      { timeoutMs, describe: `operator ${readyPath}` },
    );
  }

  /** The exit code once exited (null when a signal ended it), undefined while it runs. */
  get exitCode(): number | null | undefined {
    return this.code;
  }

  /** The signal that ended it, if one did. */
  get exitSignal(): NodeJS.Signals | null {
    return this.endSignal;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * GET over plain HTTP: /metrics from the metrics port, every other path from the probe port; status 0
   * when nothing answers, with the connection's error (`ECONNRESET`, `other side closed`, …) in `error`.
   */
  async get(urlPath: string): Promise<{ status: number; body: string; error?: string }> {
    const port = urlPath.split('?')[0] === '/metrics' ? this.metricsPort : this.probePort;
    if (port === null) return { status: 0, body: '', error: 'no port' };
    try {
      const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
      return { status: res.status, body: await res.text() };
    } catch (e) {
      return { status: 0, body: '', error: connectionError(e) };
    }
  }

  /** The last `lines` lines of output (from the file when output goes to one). */
  async tail(lines = 20): Promise<string> {
    if (typeof this.o.output === 'object') {
      const text = await readFile(this.o.output.file, 'utf8').catch(() => '');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    }
    return this.logs.slice(-lines).join('\n');
  }

  /** Sends a signal (no-op once exited). */
  signal(sig: NodeJS.Signals): void {
    if (this.code === undefined) this.child.kill(sig);
  }

  /** SIGTERM and wait for the exit code; with `killAfterMs`, SIGKILL if it has not exited by then. */
  async stop(killAfterMs?: number): Promise<number | null> {
    if (this.code !== undefined) return this.code;
    this.child.kill('SIGTERM');
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => this.child.kill('SIGKILL'), killAfterMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL: a crash, no chance to clean up. */
  async kill(): Promise<void> {
    if (this.code !== undefined) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** fetch's TypeError says only "fetch failed"; the socket's own error is its cause. */
function connectionError(e: unknown): string {
  const err = e as { message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const cause = err.cause ? [err.cause.code, err.cause.message].filter((x) => typeof x === 'string').join(' ') : '';
  return [typeof err.message === 'string' ? err.message : String(e), cause].filter((x) => x !== '').join(': ');
}
