/**
 * The operator under measurement: the real `node dist/src/main.js run` as a child process, and what
 * the bench reads from outside it — /metrics (the operator's exact request counter, histograms, queue
 * depth) and /proc/<pid>/status (resident memory, and VmHWM, the kernel's own peak).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../cluster/controlPlane.js';
import { Scrape, parseMetrics } from './stats.js';

/** Repository root (this file is compiled to dist/bench/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export class BenchOperator {
  readonly logs: string[] = [];
  /** Ports of /metrics and of /readyz, from the operator's 'starting' log line. */
  metricsPort: number | undefined;
  probePort: number | undefined;
  private exitCode: number | null | undefined;
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess, file?: WriteStream) {
    let buf = '';
    const onData = (d: Buffer): void => {
      file?.write(d);
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        // Keep a bounded tail for error reports; the bench does not parse logs for its figures.
        this.logs.push(line);
        if (this.logs.length > 500) this.logs.shift();
        if (this.probePort === undefined && line.includes('"msg":"starting"')) {
          try {
            const started = JSON.parse(line) as { metricsPort?: number; probePort?: number };
            this.metricsPort = started.metricsPort;
            this.probePort = started.probePort;
          } catch {
            // not JSON: ignore
          }
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((res) => child.on('exit', (code) => {
      file?.end();
      this.exitCode = code;
      res(code);
    }));
  }

  /**
   * Starts the operator on `namespaces` at log level info (debug logging would make the CPU figures
   * about pino; BENCH_OPERATOR_LOG_LEVEL overrides it for diagnosis) and waits until /readyz says its
   * caches are synced. With `logFile`, its whole log is kept there.
   */
  static async start(kubeconfig: string, namespaces: readonly string[], logFile?: string, extraArgs: readonly string[] = []): Promise<BenchOperator> {
    const args = [
      resolve(ROOT, 'dist/src/main.js'), 'run',
      ...extraArgs,
      `--namespaces=${namespaces.join(',')}`,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--leader-elect=false',
      `--kubeconfig=${kubeconfig}`,
    ];
    const level = process.env.BENCH_OPERATOR_LOG_LEVEL ?? 'info';
    const child = spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: level }, stdio: ['ignore', 'pipe', 'pipe'] });
    const op = new BenchOperator(child, logFile ? createWriteStream(logFile) : undefined);
    // If the bench dies (Ctrl-C, an error), the operator must not outlive it.
    const reap = (): void => {
      if (op.exitCode === undefined) child.kill('SIGKILL');
    };
    process.once('exit', reap);
    void op.exited.then(() => process.removeListener('exit', reap));
    await waitFor(async () => {
      if (op.exitCode !== undefined) throw new Error(`operator exited with ${op.exitCode}`);
      return op.probePort !== undefined && (await op.get('/readyz')).status === 200;
    }, { timeoutMs: 60_000, describe: 'operator ready' }).catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- operator log ---\n${op.logs.slice(-30).join('\n')}`);
    });
    return op;
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('operator has no pid');
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  /** GET over plain HTTP: /metrics from the metrics port, every other path from the probe port. */
  async get(path: string): Promise<{ status: number; body: string }> {
    const port = path.split('?')[0] === '/metrics' ? this.metricsPort : this.probePort;
    if (port === undefined) return { status: 0, body: '' };
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: await res.text() };
    } catch {
      return { status: 0, body: '' };
    }
  }

  /** One scrape of /metrics; throws when the operator does not answer (it died: the run is void). */
  async scrape(): Promise<Scrape> {
    const at = Date.now();
    const r = await this.get('/metrics');
    if (r.status !== 200) throw new Error(`operator /metrics answered ${r.status}\n${this.logs.slice(-30).join('\n')}`);
    return new Scrape(parseMetrics(r.body), at);
  }

  /** Current and peak resident set size in bytes, from the kernel. */
  async memory(): Promise<{ rss: number; hwm: number }> {
    const text = await readFile(`/proc/${this.pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  }

  /** SIGTERM, then wait for the exit code (SIGKILL after 30 s so a hang cannot stall the bench). */
  async stop(): Promise<number | null> {
    if (this.exitCode !== undefined) return this.exitCode;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
