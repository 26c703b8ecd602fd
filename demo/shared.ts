/**
 * What both demo stories share: where the repository is, the story's output (muted on Ctrl-C), the
 * DaemonSet and RolloutGuard manifests, the operator as a child process, `$ kubectl …` as the user would
 * type it, and the live view that follows a story (a frame redrawn in place, or timestamped CI lines).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kubectl } from '../cluster/kubectl.js';
import { daemonSetManifest, rolloutGuardManifest, toleration } from '../cluster/manifests.js';
import { waitFor } from '../cluster/wait.js';
import { OperatorChild } from '../cluster/operatorProcess.js';
import { REAL_NODE_TAINT } from '../cluster/realNode.js';
import { ciLine, fit, fmtElapsed, frame, type Snapshot, type Style } from './view.js';

export const ROOT = findRoot();
/** The DaemonSet, its pods' app label and its RolloutGuard are all called this. */
export const NAME = 'decoder';
/** The namespace a story (re)creates unless --namespace says otherwise. */
export const DEFAULT_NAMESPACE = 'rollout-guard-demo';

/** Thrown when the story did not go as expected: the demo exits non-zero with this reason. */
export class StoryFailed extends Error {}

function findRoot(): string {
  // Compiled to dist/demo/: look for package.json upwards rather than assume a depth.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (package.json)');
    dir = parent;
  }
  return dir;
}

/** Set on Ctrl-C: the story's own output stops, so only the clean-up is reported. */
let muted = false;
/** Always printed (the clean-up, the final verdict's context after Ctrl-C). */
export const say = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
/** The story's output. */
export const out = (line = ''): void => {
  if (!muted) say(line);
};
export const section = (title: string): void => out(`\n==> ${title}`);

/**
 * On SIGINT or SIGTERM: mute the story, run `cleanup` once and exit 130. Returns a probe the story reads
 * to know whether it was interrupted (then the clean-up is already under way).
 */
export function onInterrupt(cleanup: () => Promise<void>): { readonly interrupted: boolean } {
  const state = { interrupted: false };
  const onSignal = (sig: NodeJS.Signals): void => {
    if (state.interrupted) return;
    state.interrupted = true;
    muted = true;
    process.stderr.write(`\ndemo: ${sig}; cleaning up\n`);
    cleanup().then(
      () => process.exit(130),
      () => process.exit(130),
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
}

/** CI mode (one timestamped line per change) when stdout is not a terminal or CI is set; colour on a terminal unless NO_COLOR. */
export function outputMode(): { ci: boolean; color: boolean } {
  const ci = !process.stdout.isTTY || ['1', 'true', 'yes'].includes((process.env.CI ?? '').toLowerCase());
  return { ci, color: !ci && !process.env.NO_COLOR };
}

/** Confines the DaemonSet to the nodes whose label `key` has one of `values`, so other nodes never count. */
export interface Pin {
  key: string;
  values: readonly string[];
}

/** The DaemonSet: maxUnavailable 1, optionally pinned to some nodes (see {@link Pin}). */
export function daemonSet(
  ns: string,
  image: string,
  o: { pin?: Pin; minReadySeconds?: number; realNode?: boolean } = {},
): Record<string, unknown> {
  return daemonSetManifest({
    name: NAME,
    namespace: ns,
    ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
    ...(o.pin ? { nodeAffinity: o.pin } : {}),
    // The real node is tainted so that only DaemonSets meant for it run there; its busybox image
    // needs a command (kwok ignores it).
    ...(o.realNode ? { tolerations: [toleration(REAL_NODE_TAINT.key, REAL_NODE_TAINT.effect)] } : {}),
    container: {
      name: NAME,
      image,
      ...(o.realNode ? { command: ['sleep', '100000'] } : {}),
      requests: { cpu: '10m', memory: '16Mi' },
    },
  });
}

/** The guard's timings, in seconds of no progress. */
export interface Timings {
  suspectAfterSeconds: number;
  progressDeadlineSeconds: number;
}

/** The RolloutGuard of the DaemonSet; `extra` adds spec fields (e.g. bakeSeconds). */
export function rolloutGuard(
  ns: string,
  action: 'Undo' | 'Report',
  timings: Timings,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return rolloutGuardManifest({ name: NAME, namespace: ns, spec: { ...timings, ...extra, onStall: { action } } });
}

/** The operator as a child process with its log in a file, so that with --keep it outlives the demo. */
export class Operator {
  private constructor(
    private readonly op: OperatorChild,
    readonly logFile: string,
    readonly pidFile: string,
  ) {}

  static async start(kubeconfig: string, ns: string, stateDir: string): Promise<Operator> {
    await mkdir(stateDir, { recursive: true });
    const logFile = path.join(stateDir, 'operator.log');
    const pidFile = path.join(stateDir, 'operator.pid');
    let op: OperatorChild;
    try {
      // Loopback, on ports the harness picks: the demo may run beside anything.
      op = await OperatorChild.start({
        args: [`--namespaces=${ns}`, '--leader-elect=false', `--kubeconfig=${kubeconfig}`],
        env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
        output: { file: logFile },
        timeoutMs: 60_000,
        // Its own process group: a Ctrl-C on the demo reaches the demo, which then decides (--keep or not).
        detached: true,
      });
    } catch (e) {
      throw new StoryFailed(e instanceof Error ? e.message : String(e));
    }
    await writeFile(pidFile, `${op.pid}\n`);
    return new Operator(op, logFile, pidFile);
  }

  get pid(): number | undefined {
    return this.op.pid;
  }

  /** The exit code once exited (128 when a signal ended it), else undefined. */
  get exited(): number | null | undefined {
    const code = this.op.exitCode;
    return code === undefined ? undefined : (code ?? (this.op.exitSignal ? 128 : 1));
  }

  tail(lines = 20): Promise<string> {
    return this.op.tail(lines);
  }

  /** Leaves it running after the demo exits (--keep). */
  detach(): void {
    this.op.child.unref();
  }

  async stop(): Promise<void> {
    await this.op.stop(15_000);
    await rm(this.pidFile, { force: true });
  }
}

/**
 * A `--keep` run leaves its operator behind; a second operator on the same namespace would act twice.
 * Stop the one this demo started earlier, identified by its pid file and its command line.
 */
export async function stopPrevious(pidFile: string): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!(pid > 0)) return;
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // gone, or no /proc (then we cannot tell it is ours, and leave it)
  }
  if (cmdline.includes(path.join(ROOT, 'dist/src/main.js')) && cmdline.includes('\0run\0')) {
    out(`    stopping the operator a previous --keep run left (pid ${pid})`);
    process.kill(pid, 'SIGTERM');
    await waitFor(() => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'), {
      timeoutMs: 20_000,
      describe: `pid ${pid} to exit`,
    });
  }
  await rm(pidFile, { force: true });
}

/**
 * Runs kubectl and prints it as the user would type it (KUBECONFIG exported). `ns` is appended as `-n`;
 * `from` prints only the output from the first line it matches on, shown as the `sed` that would do it.
 */
export async function show(
  kubectl: Kubectl,
  args: string[],
  ns: string | undefined,
  o: { from?: { re: RegExp; sed: string } } = {},
): Promise<string> {
  out(`\n$ kubectl ${args.join(' ')}${ns ? ` -n ${ns}` : ''}${o.from ? ` | sed -n '${o.from.sed}'` : ''}`);
  const r = await kubectl(args, { ...(ns ? { ns } : {}), allowFail: true });
  let text = (r.stdout + (r.code !== 0 ? r.stderr : '')).trimEnd();
  if (o.from && r.code === 0) {
    const lines = text.split('\n');
    const i = lines.findIndex((l) => o.from!.re.test(l));
    text = i < 0 ? text : lines.slice(i).join('\n');
  }
  out(text);
  return text;
}

/**
 * Follows a story: in CI mode, prints each new guard Event, a line whenever {@link ciLine} changes and the
 * guard's message when its state or cause changes; on a terminal, redraws the {@link frame} in place.
 * {@link LiveView.note} narrates a step: a timestamped line in CI mode, a line above the frame on a terminal.
 * Times are shown relative to `t0` (the image change).
 */
export class LiveView {
  private drawn = 0;
  private lastCi = '';
  private lastMessage = '';
  private last: Snapshot | undefined;
  private readonly seen = new Set<string>();

  /** The frame's first line; a story may change it as it moves on. */
  header: string;

  constructor(private readonly o: { ci: boolean; st: Style; t0: number; header: string }) {
    this.header = o.header;
  }

  stamp(ms: number): string {
    return `[${fmtElapsed(ms - this.o.t0).padStart(7)}]`;
  }

  draw(s: Snapshot): void {
    this.last = s;
    if (muted) return;
    if (this.o.ci) {
      // Events first: they carry their own (earlier) times and explain the line that follows.
      for (const e of s.events) {
        if (this.seen.has(e.uid)) continue;
        this.seen.add(e.uid);
        out(`${this.stamp(e.at)} event ${e.reason} (${e.type})`);
      }
      const line = ciLine(s);
      if (line !== this.lastCi) {
        this.lastCi = line;
        out(`${this.stamp(s.at)} ${line}`);
      }
      // The message restates the idle time on every status write; print it when the state changes.
      const msgKey = `${s.guard?.state ?? ''}/${s.guard?.cause ?? ''}`;
      if (msgKey !== this.lastMessage) {
        this.lastMessage = msgKey;
        if (s.guard?.message) out(`${this.stamp(s.at)}   guard: ${s.guard.message}`);
      }
      return;
    }
    const width = Math.max(40, (process.stdout.columns ?? 100) - 1);
    const lines = frame(s, this.o.t0, this.header, this.o.st).map((l) => fit(l, width));
    // Move up over the previous frame, rewrite each line, then clear whatever the old frame had below.
    const up = this.drawn > 0 ? `\x1b[${this.drawn}A\r` : '';
    process.stdout.write(`${up}${lines.map((l) => `\x1b[2K${l}\n`).join('')}\x1b[J`);
    this.drawn = lines.length;
  }

  /**
   * Leaves the frame where it is on a terminal: the next {@link draw} starts below whatever is printed in
   * between (kubectl output), instead of moving up over it.
   */
  leave(): void {
    this.drawn = 0;
  }

  note(line: string, at = Date.now()): void {
    if (muted) return;
    if (this.o.ci || this.drawn === 0) {
      out(`${this.stamp(at)} ${line}`);
      return;
    }
    // Over the frame: erase it, print the note where it was, and draw the frame again below.
    process.stdout.write(`\x1b[${this.drawn}A\r\x1b[J${this.stamp(at)} ${line}\n`);
    this.drawn = 0;
    if (this.last) this.draw(this.last);
  }
}
