/**
 * The operator under measurement: the real `node dist/src/main.js run` as a child process, and what
 * the bench reads from outside it — /metrics (the operator's exact request counter, histograms, queue
 * depth) and /proc/<pid>/status (resident memory, and VmHWM, the kernel's own peak).
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OperatorChild } from '../cluster/operatorProcess.js';
import { OperatorLog } from './operatorLog.js';
import { Scrape, parseMetrics } from './stats.js';

/** Repository root (this file is compiled to dist/bench/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export class BenchOperator {
  private readonly retried: string[] = [];

  private constructor(
    private readonly op: OperatorChild,
    /** The lines of its log that join the bench's samples to the operator's moments (bench/operatorLog.ts). */
    readonly log: OperatorLog,
  ) {}

  /** Port of /metrics. */
  get metricsPort(): number | null {
    return this.op.metricsPort;
  }

  /** Port of /readyz. */
  get probePort(): number {
    return this.op.probePort;
  }

  /**
   * A bounded tail of the log, for error reports. The bench takes no figure from the log; it reads only
   * the moments that join a sample's two ends ({@link log}).
   */
  get logs(): string[] {
    return this.op.logs;
  }

  /**
   * Starts the operator on `namespaces` at log level info (debug logging would make the CPU figures
   * about pino; BENCH_OPERATOR_LOG_LEVEL overrides it for diagnosis) and waits until /readyz says its
   * caches are synced. With `logFile`, its whole log is kept there.
   */
  static async start(
    kubeconfig: string,
    namespaces: readonly string[],
    logFile?: string,
    extraArgs: readonly string[] = [],
  ): Promise<BenchOperator> {
    const level = process.env.BENCH_OPERATOR_LOG_LEVEL ?? 'info';
    const file = logFile ? createWriteStream(logFile) : undefined;
    const nodeArgs = operatorNodeArgs();
    const priority = operatorPriority();
    const read = new OperatorLog();
    const op = await OperatorChild.start({
      ...(nodeArgs.length > 0 ? { nodeArgs } : {}),
      ...(priority !== undefined ? { priority } : {}),
      args: [...extraArgs, `--namespaces=${namespaces.join(',')}`, '--leader-elect=false', `--kubeconfig=${kubeconfig}`],
      env: { ...process.env, LOG_LEVEL: level },
      keepLines: 500,
      onLine: (l: string) => read.line(l),
      ...(file ? { onChunk: (d: Buffer) => void (file.writableEnded || file.write(d)) } : {}),
      timeoutMs: 60_000,
    }).catch((e: unknown) => {
      file?.end();
      throw e;
    });
    void op.exited.then(() => file?.end());
    // If the bench dies (Ctrl-C, an error), the operator must not outlive it.
    const reap = (): void => {
      if (op.exitCode === undefined) op.child.kill('SIGKILL');
    };
    process.once('exit', reap);
    void op.exited.then(() => process.removeListener('exit', reap));
    return new BenchOperator(op, read);
  }

  get pid(): number {
    if (this.op.pid === undefined) throw new Error('operator has no pid');
    return this.op.pid;
  }

  get alive(): boolean {
    return this.op.exitCode === undefined;
  }

  /** GET over plain HTTP: /metrics from the metrics port, every other path from the probe port. */
  get(path: string): Promise<{ status: number; body: string; error?: string }> {
    return this.op.get(path);
  }

  /**
   * One scrape of /metrics; throws when the operator does not answer (it died: the run is void).
   *
   * A connection that fails before any answer is tried once more, on a new connection, as Prometheus's
   * HTTP client retries a GET whose reused connection the server had closed. The bench's own event loop
   * blocks for seconds while it weighs a 5,000-node cache (bench/footprint.ts), so its pooled keep-alive
   * connection can outlive the operator's keep-alive timeout: the next GET on it meets a closed socket,
   * which says nothing about the operator. `retriedScrapes` counts these, and the result records them.
   */
  async scrape(): Promise<Scrape> {
    const at = Date.now();
    const r = await againOnFailedConnection(
      () => this.get('/metrics'),
      () => this.alive,
      (error) => this.retried.push(error),
    );
    if (r.status !== 200) {
      // Whether it died (and how) or lives and did not answer decides where to look: say which.
      const state = this.alive
        ? `the process is alive (pid ${this.pid})`
        : `the process exited (code ${String(this.op.exitCode)}, signal ${String(this.op.exitSignal)})`;
      const why = r.error !== undefined ? ` (${r.error})` : '';
      throw new Error(`operator /metrics answered ${r.status}${why}: ${state}\n${this.logs.slice(-30).join('\n')}`);
    }
    return new Scrape(parseMetrics(r.body), at);
  }

  /** The connection errors of scrapes that were tried again, in order (see {@link scrape}). */
  get retriedScrapes(): readonly string[] {
    return this.retried;
  }

  /** Current and peak resident set size in bytes, from the kernel. */
  async memory(): Promise<{ rss: number; hwm: number }> {
    const text = await readFile(`/proc/${this.pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  }

  /** SIGTERM, then wait for the exit code (SIGKILL after 30 s so a hang cannot stall the bench). */
  stop(): Promise<number | null> {
    return this.op.stop(30_000);
  }
}

/**
 * `get`, and once more when its connection failed before any answer (status 0) while the process it
 * asks is alive; `onRetry` gets the first connection's error. A second failure is returned as it is.
 */
export async function againOnFailedConnection<R extends { status: number; error?: string }>(
  get: () => Promise<R>,
  alive: () => boolean,
  onRetry: (error: string) => void,
): Promise<R> {
  const first = await get();
  if (first.status !== 0 || !alive()) return first;
  onRetry(first.error ?? 'no error');
  return get();
}

/**
 * Node and V8 flags for the operator's process, from BENCH_OPERATOR_NODE_ARGS (split on spaces): for
 * measuring a runtime setting, such as the young generation's size, before the image adopts it.
 */
export function operatorNodeArgs(): string[] {
  return (process.env.BENCH_OPERATOR_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

/**
 * The operator's nice value, from BENCH_OPERATOR_PRIORITY (-20 to 19; below 0 needs root): on a machine
 * where the control plane and the operator share two cores, a negative value stands in for the CPU
 * request the operator's pod has on a cluster, so its figures separate the API server's time from the
 * operator's wait for a core. Unset, the operator runs at the bench's own priority.
 */
export function operatorPriority(): number | undefined {
  const raw = process.env.BENCH_OPERATOR_PRIORITY;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < -20 || n > 19) throw new Error(`BENCH_OPERATOR_PRIORITY must be an integer from -20 to 19, got ${raw}`);
  return n;
}
