#!/usr/bin/env node
/**
 * `npm run demo`: the quiet stall, told in under a minute on a local 3-node control plane.
 *
 *   1. start (or reuse) the local control plane and install the CRDs;
 *   2. run the operator, scoped to a fresh namespace;
 *   3. create the `decoder` DaemonSet (maxUnavailable 1) and a RolloutGuard (suspect 10 s, stalled 20 s);
 *   4. once 3/3 are ready, change the image to one that cannot be pulled;
 *   5. watch the guard notice, explain and (with onStall.action Undo) undo it;
 *   6. print the real kubectl output, the Events and a summary, and exit 0 only if all of that happened.
 *
 * On a terminal the live view is redrawn in place; otherwise (CI, a pipe, CI=true) it prints one
 * timestamped line per change. See `--help` for the flags.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../src/check.js';
import type { GuardStatus } from '../src/domain/types.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import { UsageError } from '../src/runtime/config.js';
import { down, kubectlRunner, status as clusterStatus, up, waitFor, type Kubectl } from '../test/cluster/controlPlane.js';
import { ciLine, fit, fmtElapsed, frame, oneGeneration, readSnapshot, style, summary, type Snapshot, type StoryRecord } from './view.js';

const ROOT = findRoot();
const NAME = 'decoder';
const LOCAL_NODES = ['node-1', 'node-2', 'node-3'];
const TIMINGS = { suspectAfterSeconds: 10, progressDeadlineSeconds: 20 };

const USAGE = `usage: npm run demo [-- OPTIONS]   (or: node dist/demo/demo.js [OPTIONS])

A DaemonSet rollout stalls quietly on one node; rollout-guard notices, explains it and undoes it.

  --action Undo|Report   what the guard does once the rollout is stalled (default Undo)
  --keep                 leave the cluster, the namespace and the operator running, and print how to explore them
  --kubeconfig PATH      run on an existing cluster instead of the local control plane
                         (images default to registry.k8s.io/pause:3.10 and a tag of it that does not exist)
  --namespace NS         namespace to (re)create for the demo (default rollout-guard-demo)
  --image IMAGE          the good image (default registry.local/decoder:1, or the pause image with --kubeconfig)
  --broken-image IMAGE   the image that cannot be pulled (default registry.local/decoder:2-broken)
  --timeout DURATION     give up if the story has not completed this long after the image change (default 3m)

Exit status 0 only if the story completed as expected (Undo: RolledBack, one generation on the original
revision; Report: Stalled with cause ImagePullFailure and an undo plan). Live view redrawn in place on a
terminal; plain timestamped lines when stdout is not a terminal or CI=true.`;

interface Options {
  action: 'Undo' | 'Report';
  keep: boolean;
  kubeconfig?: string;
  namespace: string;
  image: string;
  brokenImage: string;
  timeoutMs: number;
}

/** Thrown when the story did not go as expected: the demo exits non-zero with this reason. */
class StoryFailed extends Error {}

function parseArgs(args: readonly string[]): Options | 'help' {
  let action: Options['action'] = 'Undo';
  let keep = false;
  let kubeconfig: string | undefined;
  let namespace = 'rollout-guard-demo';
  let image: string | undefined;
  let brokenImage: string | undefined;
  let timeoutMs = 180_000;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--keep':
        keep = true;
        break;
      case '--action': {
        const v = value();
        const norm = v.toLowerCase() === 'undo' ? 'Undo' : v.toLowerCase() === 'report' ? 'Report' : undefined;
        if (!norm) throw new UsageError(`--action wants Undo or Report, got ${JSON.stringify(v)}`);
        action = norm;
        break;
      }
      case '--kubeconfig':
        kubeconfig = path.resolve(value());
        break;
      case '-n':
      case '--namespace':
        namespace = value();
        if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) throw new UsageError(`--namespace: ${JSON.stringify(namespace)} is not a namespace name`);
        break;
      case '--image':
        image = value();
        break;
      case '--broken-image':
        brokenImage = value();
        break;
      case '--timeout':
        timeoutMs = parseDuration('--timeout', value()) * 1000;
        break;
      default:
        throw new UsageError(`unknown argument ${a}`);
    }
  }
  // On the local control plane kwok decides pod fates by image name; a real cluster really pulls, so the
  // good image must exist there and the broken one must not.
  const external = kubeconfig !== undefined;
  const opts: Options = {
    action,
    keep,
    namespace,
    image: image ?? (external ? 'registry.k8s.io/pause:3.10' : 'registry.local/decoder:1'),
    brokenImage: brokenImage ?? (external ? 'registry.k8s.io/pause:0.0-broken-by-rollout-guard-demo' : 'registry.local/decoder:2-broken'),
    timeoutMs,
  };
  if (kubeconfig) opts.kubeconfig = kubeconfig;
  return opts;
}

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
const say = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const out = (line = ''): void => {
  if (!muted) say(line);
};
const section = (title: string): void => out(`\n==> ${title}`);

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pinned kubectl if test/cluster/build.sh has built it, found without running the build (a cold
 * build takes tens of minutes and an existing cluster does not need one), else kubectl on PATH. The
 * cache key is computed exactly as build.sh computes it.
 */
function findKubectl(): string | undefined {
  const c = path.join(ROOT, 'test', 'cluster');
  const files = ['versions.env', 'k8s/go.mod', 'k8s/go.sum', 'etcd/go.mod', 'etcd/go.sum', 'etcd/main.go'].map((f) => path.join(c, f));
  if (files.every((f) => existsSync(f))) {
    const key = createHash('sha256').update(Buffer.concat(files.map((f) => readFileSync(f)))).digest('hex').slice(0, 16);
    const cacheRoot = process.env.ROLLOUT_GUARD_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'rollout-guard');
    const pinned = path.join(cacheRoot, key, 'bin', 'kubectl');
    if (isExecutable(pinned)) return pinned;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'kubectl'))) return path.join(dir, 'kubectl');
  }
  return undefined;
}

/** The DaemonSet: maxUnavailable 1, pinned to node-1..3 on the local cluster so other node pools never count. */
function daemonSet(ns: string, image: string, pinNodes: readonly string[] | undefined): Record<string, unknown> {
  const labels = { app: NAME };
  const affinity = pinNodes
    ? {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [...pinNodes] }] }],
          },
        },
      }
    : undefined;
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: NAME, namespace: ns, labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: {
        metadata: { labels },
        spec: {
          ...(affinity ? { affinity } : {}),
          terminationGracePeriodSeconds: 1,
          containers: [{ name: NAME, image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        },
      },
    },
  };
}

function rolloutGuard(ns: string, action: Options['action']): Record<string, unknown> {
  return {
    apiVersion: 'rolloutguard.dev/v1alpha1',
    kind: 'RolloutGuard',
    metadata: { name: NAME, namespace: ns },
    spec: { targetRef: { kind: 'DaemonSet', name: NAME }, ...TIMINGS, onStall: { action } },
  };
}

/** The operator as a child process with its log in a file, so that with --keep it outlives the demo. */
class Operator {
  private exitCode: number | null | undefined;
  private constructor(
    readonly child: ChildProcess,
    readonly logFile: string,
    readonly pidFile: string,
  ) {
    child.on('exit', (code, signal) => (this.exitCode = code ?? (signal ? 128 : 1)));
  }

  static async start(kubeconfig: string, ns: string, stateDir: string): Promise<Operator> {
    await mkdir(stateDir, { recursive: true });
    const logFile = path.join(stateDir, 'operator.log');
    const pidFile = path.join(stateDir, 'operator.pid');
    const fd = openSync(logFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(
        process.execPath,
        [path.join(ROOT, 'dist/src/main.js'), 'run', `--namespaces=${ns}`, '--leader-elect=false', '--port=0', `--kubeconfig=${kubeconfig}`],
        // Its own process group: a Ctrl-C on the demo reaches the demo, which then decides (--keep or not).
        { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' } },
      );
    } finally {
      closeSync(fd);
    }
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    await writeFile(pidFile, `${child.pid}\n`);
    const op = new Operator(child, logFile, pidFile);
    const port = await waitFor(
      async () => {
        if (op.exitCode !== undefined) throw new StoryFailed(`the operator exited with ${op.exitCode}\n${await op.tail()}`);
        const line = (await readFile(logFile, 'utf8')).split('\n').find((l) => l.includes('"msg":"starting"'));
        return line ? (JSON.parse(line) as { port?: number }).port : undefined;
      },
      { timeoutMs: 30_000, describe: 'the operator to log "starting"' },
    );
    await waitFor(
      async () => {
        if (op.exitCode !== undefined) throw new StoryFailed(`the operator exited with ${op.exitCode}\n${await op.tail()}`);
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      },
      { timeoutMs: 30_000, describe: 'the operator /readyz' },
    );
    return op;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get exited(): number | null | undefined {
    return this.exitCode;
  }

  async tail(lines = 20): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Leaves it running after the demo exits (--keep). */
  detach(): void {
    this.child.unref();
  }

  async stop(): Promise<void> {
    if (this.exitCode === undefined) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(this.pidFile, { force: true });
  }
}

/**
 * A `--keep` run leaves its operator behind; a second operator on the same namespace would act twice.
 * Stop the one this demo started earlier, identified by its pid file and its command line.
 */
async function stopPrevious(pidFile: string): Promise<void> {
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
    await waitFor(() => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'), { timeoutMs: 20_000, describe: `pid ${pid} to exit` });
  }
  await rm(pidFile, { force: true });
}

/** Runs kubectl and prints it as the user would type it (KUBECONFIG exported). */
async function show(kubectl: Kubectl, args: string[], ns: string): Promise<string> {
  out(`\n$ kubectl ${args.join(' ')} -n ${ns}`);
  const r = await kubectl(args, { ns, allowFail: true });
  const text = (r.stdout + (r.code !== 0 ? r.stderr : '')).trimEnd();
  out(text);
  return text;
}

async function main(argv: string[]): Promise<number> {
  let opts: Options;
  try {
    const parsed = parseArgs(argv);
    if (parsed === 'help') {
      out(USAGE);
      return 0;
    }
    opts = parsed;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`demo: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const ci = !process.stdout.isTTY || ['1', 'true', 'yes'].includes((process.env.CI ?? '').toLowerCase());
  const st = style(!ci && !process.env.NO_COLOR);
  const ns = opts.namespace;
  const external = opts.kubeconfig !== undefined;

  // --- 1. Cluster and CRDs --------------------------------------------------------------------------
  let kubeconfig: string;
  let kubectl: Kubectl;
  let kubectlBin: string;
  let startedCluster = false;
  section(external ? `Using the cluster in ${opts.kubeconfig}` : 'Local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)');
  if (opts.kubeconfig) {
    kubeconfig = opts.kubeconfig;
    const bin = findKubectl();
    if (!bin) throw new StoryFailed('no kubectl: install one on PATH, or build the pinned one with `npm run cluster:build`');
    kubectlBin = bin;
    kubectl = kubectlRunner(path.dirname(bin), kubeconfig);
    out(`    kubectl: ${bin}`);
    const v = await kubectl(['get', 'nodes', '--no-headers'], { allowFail: true });
    if (v.code !== 0) throw new StoryFailed(`cannot reach the cluster: ${v.stderr.trim()}`);
    out(`    ${v.stdout.trim().split('\n').length} node(s)`);
  } else {
    // Only a hint for the reader; whether the demo started the cluster (and so stops it) is up()'s answer.
    const before = await clusterStatus();
    if (!before.components.some((c) => c.alive)) {
      out('    not running: starting it (the first run on a machine builds the binaries from Go modules first: tens of minutes on 2 cores, progress below)');
    }
    const info = await up({ nodes: LOCAL_NODES.length, log: (l) => out(`    ${l}`) });
    startedCluster = info.mode !== 'reused';
    kubeconfig = info.kubeconfig;
    kubectlBin = path.join(info.binDir, 'kubectl');
    kubectl = kubectlRunner(info.binDir, kubeconfig);
  }
  section('CRDs');
  out((await kubectl(['apply', '--server-side', '--force-conflicts', '-k', path.join(ROOT, 'config/crd')])).stdout.trimEnd().replace(/^/gm, '    '));
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/rolloutguards.rolloutguard.dev']);

  const client = ApiClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  const stateDir = path.join(tmpdir(), 'rollout-guard-demo', ns);
  let op: Operator | undefined;
  let interrupted = false;
  let cleaning: Promise<void> | undefined;

  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      if (opts.keep) {
        op?.detach();
        if (interrupted && op) say(`\n--keep: the operator is left running (pid ${op.pid}, log ${op.logFile}); kill ${op.pid} stops it`);
        return;
      }
      say('\n==> Cleaning up');
      if (op) {
        await op.stop();
        say('    operator stopped');
      }
      await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=90s'], { allowFail: true });
      say(`    namespace ${ns} deleted`);
      if (startedCluster) {
        await down({ log: (l) => say(`    ${l}`) });
        say('    the local cluster was not running before the demo, so it was stopped again (npm run cluster:up keeps one running)');
      } else if (!external) {
        say('    the local cluster was already running before the demo and is left running (npm run cluster:down stops it)');
      }
    })());
  const onSignal = (sig: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    muted = true;
    process.stderr.write(`\ndemo: ${sig}; cleaning up\n`);
    cleanup().then(
      () => process.exit(130),
      () => process.exit(130),
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let ok = false;
  let reason = '';
  try {
    // --- 2. Namespace and operator ---------------------------------------------------------------
    section(`Namespace ${ns} and the operator`);
    await stopPrevious(path.join(stateDir, 'operator.pid'));
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=90s']);
    await kubectl(['create', 'namespace', ns]);
    op = await Operator.start(kubeconfig, ns, stateDir);
    out(`    operator running: pid ${op.pid}, watching namespace ${ns}, log ${op.logFile}`);

    // --- 3. DaemonSet and guard ------------------------------------------------------------------
    section(`DaemonSet ${NAME} (maxUnavailable 1, image ${opts.image}) and its RolloutGuard`);
    await kubectl(['apply', '-f', '-'], { input: JSON.stringify(daemonSet(ns, opts.image, external ? undefined : LOCAL_NODES)) });
    const pinned = external ? [] : LOCAL_NODES;
    const now = (): number => Date.now();
    const healthy = await waitFor(
      async () => {
        const s = await readSnapshot(client, ns, NAME, pinned, now);
        return oneGeneration(s) && s.ds && (external || s.ds.desired === LOCAL_NODES.length) ? s : undefined;
      },
      { timeoutMs: 120_000, describe: `ds/${NAME} ${external ? 'all' : '3/3'} ready` },
    );
    out(`    ds/${NAME}: ${healthy.ds?.ready}/${healthy.ds?.desired} ready`);
    await kubectl(['apply', '-f', '-'], { input: JSON.stringify(rolloutGuard(ns, opts.action)) });
    out(`    rolloutguard/${NAME}: suspectAfterSeconds ${TIMINGS.suspectAfterSeconds}, progressDeadlineSeconds ${TIMINGS.progressDeadlineSeconds}, onStall.action ${opts.action}`);
    const baseline = await waitFor(
      async () => {
        const s = await readSnapshot(client, ns, NAME, pinned, now);
        return s.guard?.state === 'Healthy' && s.guard.currentRevision ? s : undefined;
      },
      { timeoutMs: 30_000, describe: `rolloutguard/${NAME} Healthy` },
    );
    const original = baseline.guard!.currentRevision!;
    const desired = baseline.ds!.desired;
    out(`    guard Healthy: ${baseline.guard?.message ?? ''}`);

    // --- 4. The bad rollout ----------------------------------------------------------------------
    section(`Changing the image to ${opts.brokenImage}`);
    out(`$ kubectl set image ds/${NAME} ${NAME}=${opts.brokenImage} -n ${ns}`);
    // Measured from just before the command: detection times are, if anything, over-stated.
    const t0 = Date.now();
    await kubectl(['set', 'image', `ds/${NAME}`, `${NAME}=${opts.brokenImage}`], { ns });
    section(
      opts.action === 'Undo'
        ? `Watching: the guard should call it Suspect after ${TIMINGS.suspectAfterSeconds}s and Stalled after ${TIMINGS.progressDeadlineSeconds}s without progress, then undo it`
        : `Watching: the guard should call it Suspect after ${TIMINGS.suspectAfterSeconds}s and Stalled after ${TIMINGS.progressDeadlineSeconds}s without progress, and only report`,
    );

    const record: StoryRecord = {
      action: opts.action,
      ns,
      name: NAME,
      brokenImage: opts.brokenImage,
      ...TIMINGS,
      original,
      blocked: [],
      empty: [],
      desired,
    };
    const story = await watch({ client, ns, pinned, t0, opts, record, op, ci, st, original: original.hash });
    ok = story.ok;
    reason = story.reason;

    // --- 6. The real kubectl output (5. is the live view, in watch()) -------------------------
    // The operator records its Events asynchronously; wait briefly for the ones the story is about.
    const wanted = opts.action === 'Undo' ? ['RolloutStalled', 'UndoComplete'] : ['RolloutStalled'];
    if (ok) {
      try {
        await waitFor(
          async () => {
            const r = await kubectl(['get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'jsonpath={.items[*].reason}'], { ns });
            const have = new Set(r.stdout.split(/\s+/));
            return wanted.every((w) => have.has(w));
          },
          { timeoutMs: 15_000, describe: `Events ${wanted.join(', ')}` },
        );
      } catch (e) {
        ok = false;
        reason = e instanceof Error ? e.message : String(e);
      }
    }
    section('What kubectl shows now');
    await show(kubectl, ['get', 'ds', NAME, '-o', 'wide'], ns);
    await show(kubectl, ['get', 'pods', '-o', 'wide'], ns);
    await show(kubectl, ['get', 'rg'], ns);
    await show(kubectl, ['describe', 'rg', NAME], ns);
    section('Events');
    await show(kubectl, ['get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '--sort-by=.metadata.creationTimestamp'], ns);

    if (!ok) out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
    section('Summary');
    out(summary(record));
    if (record.stalledAt !== undefined) {
      out('');
      out(`detection time (Stalled − image change): ${(record.stalledAt / 1000).toFixed(1)} s`);
      if (opts.action === 'Undo') out(`time to one generation again (from the image change): ${record.oneGenerationAt !== undefined ? `${(record.oneGenerationAt / 1000).toFixed(1)} s` : 'never'}`);
    }
  } catch (e) {
    ok = false;
    reason = e instanceof Error ? e.message : String(e);
    if (op) out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
  } finally {
    client.close();
  }

  out('');
  out(ok ? `demo: OK (${opts.action}): the story completed as expected` : `demo: FAILED (${opts.action}): ${reason}`);
  if (opts.keep) {
    op?.detach();
    const binDir = path.dirname(kubectlBin);
    section('Still running (--keep): explore with');
    out(`    export KUBECONFIG=${kubeconfig}`);
    out(`    export PATH=${binDir}:$PATH   # the kubectl the demo used`);
    out(`    kubectl get ds,pods -n ${ns} -o wide`);
    out(`    kubectl get rg -n ${ns} -o wide`);
    out(`    kubectl describe rg ${NAME} -n ${ns}`);
    out(`    kubectl get events -n ${ns} --field-selector involvedObject.name=${NAME}`);
    out(`    kubectl set image ds/${NAME} -n ${ns} ${NAME}=${external ? 'registry.k8s.io/pause:3.9' : 'registry.local/decoder:3'}            # a rollout that completes`);
    out(`    kubectl set image ds/${NAME} -n ${ns} ${NAME}=${external ? 'registry.k8s.io/pause:0.0-broken-again' : 'registry.local/decoder:4-broken'}  # another that stalls`);
    if (op) out(`    tail -f ${op.logFile}  # the operator's log`);
    out('  stop with');
    if (op) out(`    kill ${op.pid}  # the operator`);
    out(`    kubectl delete namespace ${ns}`);
    if (!external) out('    npm run cluster:down  # the local cluster');
  } else if (!interrupted) {
    await cleanup();
  }
  return ok ? 0 : 1;
}

interface WatchArgs {
  client: ApiClient;
  ns: string;
  pinned: readonly string[];
  t0: number;
  opts: Options;
  record: StoryRecord;
  op: Operator;
  ci: boolean;
  st: ReturnType<typeof style>;
  original: string;
}

/** The states in which the bad rollout itself (not the undo) is in flight. */
const IN_FLIGHT = new Set(['Progressing', 'Suspect', 'Stalled']);

/**
 * The live view, until the story ends one way or the other. Fills `record` with what happened and when:
 * transition times come from the guard's Events (microsecond eventTime), because with onStall.action Undo
 * the Stalled state lasts only until the undo is applied, well under one polling interval.
 * Polls the API server twice a second: five GETs a tick, cheaper than spawning kubectl.
 */
async function watch(a: WatchArgs): Promise<{ ok: boolean; reason: string }> {
  const { record, opts } = a;
  const deadline = a.t0 + opts.timeoutMs;
  let drawn = 0;
  let lastCi = '';
  let lastMessage = '';
  const seen = new Set<string>();
  const header = `namespace ${a.ns} · onStall.action ${opts.action} · suspect ${record.suspectAfterSeconds}s, stalled ${record.progressDeadlineSeconds}s`;
  const stamp = (ms: number): string => `[${fmtElapsed(ms - a.t0).padStart(7)}]`;
  const draw = (s: Snapshot): void => {
    if (a.ci) {
      // Events first: they carry their own (earlier) times and explain the line that follows.
      for (const e of s.events) {
        if (seen.has(e.uid)) continue;
        seen.add(e.uid);
        out(`${stamp(e.at)} event ${e.reason} (${e.type})`);
      }
      const line = ciLine(s);
      if (line !== lastCi) {
        lastCi = line;
        out(`${stamp(s.at)} ${line}`);
      }
      // The message restates the idle time on every status write; print it when the state changes.
      const msgKey = `${s.guard?.state ?? ''}/${s.guard?.cause ?? ''}`;
      if (msgKey !== lastMessage) {
        lastMessage = msgKey;
        if (s.guard?.message) out(`${stamp(s.at)}   guard: ${s.guard.message}`);
      }
      return;
    }
    const width = Math.max(40, (process.stdout.columns ?? 100) - 1);
    const lines = frame(s, a.t0, header, a.st).map((l) => fit(l, width));
    // Move up over the previous frame, rewrite each line, then clear whatever the old frame had below.
    const up = drawn > 0 ? `\x1b[${drawn}A\r` : '';
    process.stdout.write(`${up}${lines.map((l) => `\x1b[2K${l}\n`).join('')}\x1b[J`);
    drawn = lines.length;
  };
  const eventAt = (s: Snapshot, reason: string): number | undefined => {
    const e = s.events.find((x) => x.reason === reason && x.at >= a.t0);
    return e ? e.at - a.t0 : undefined;
  };

  for (;;) {
    const s = await readSnapshot(a.client, a.ns, NAME, a.pinned, () => Date.now());
    const g: GuardStatus | undefined = s.guard;
    draw(s);

    // --- Record what happened. ---
    if (g?.rollout?.toRevision && g.rollout.toRevision.hash !== a.original && !record.broken) record.broken = { ...g.rollout.toRevision };
    // The split while the bad rollout is in flight: by definition of "no progress" it is the split at the stall.
    if (g && IN_FLIGHT.has(g.state ?? '') && !g.rollout?.rollback && !g.lastUndo) {
      record.blocked = [...(g.blockedNodes ?? [])];
      record.empty = [...(g.emptyNodes ?? [])];
      if (s.ds) record.stalledColumns = s.ds;
      record.stalledSplit = (g.generations ?? []).map((x) => ({ ...(x.revision !== undefined ? { revision: x.revision } : {}), hash: x.hash, nodes: x.nodes }));
      if (g.cause) record.cause = g.cause;
    }
    record.suspectAt ??= eventAt(s, 'RolloutSuspect');
    if (record.stalledAt === undefined) {
      record.stalledAt = eventAt(s, 'RolloutStalled');
      const note = s.events.find((e) => e.reason === 'RolloutStalled')?.note ?? '';
      // The note is the guard's stall sentence, which names the cause class ("Cause ImagePullFailure: …").
      const m = /Cause (\w+):/.exec(note);
      if (m?.[1]) record.cause = m[1];
    }
    if (g?.lastUndo) record.undo = g.lastUndo;
    if (g?.undoPlan) record.plan = g.undoPlan;
    const completeAt = eventAt(s, 'UndoComplete');
    if (completeAt !== undefined && oneGeneration(s) === a.original) {
      record.oneGenerationAt ??= completeAt;
      record.restoredAs ??= s.nodes[0]?.pods[0]?.revision;
    }

    // --- Has the story ended? ---
    if (a.op.exited !== undefined) return { ok: false, reason: `the operator exited with ${a.op.exited}\n${await a.op.tail()}` };
    if (opts.action === 'Undo') {
      const u = g?.lastUndo;
      if (u && (u.result === 'Failed' || u.result === 'RollbackStalled')) return { ok: false, reason: `the undo ended ${u.result}: ${u.message}` };
      if (g?.state === 'RolledBack' && u?.result === 'Complete' && record.oneGenerationAt !== undefined) {
        if (record.stalledAt === undefined) return { ok: false, reason: 'rolled back without a RolloutStalled event' };
        if (record.cause !== 'ImagePullFailure') return { ok: false, reason: `rolled back, but the stall was classified ${record.cause ?? 'without a cause'}, expected ImagePullFailure` };
        if (record.blocked.length !== 1) return { ok: false, reason: `expected exactly one blocked node at the stall, got ${JSON.stringify(record.blocked)}` };
        if (s.ds?.desired !== record.desired) return { ok: false, reason: `DESIRED is ${s.ds?.desired}, expected ${record.desired}` };
        return { ok: true, reason: '' };
      }
    } else {
      if (g?.lastUndo || g?.state === 'RollingBack' || g?.state === 'RolledBack') return { ok: false, reason: 'onStall.action is Report, yet the guard undid the rollout' };
      const plan = g?.undoPlan;
      if (g?.state === 'Stalled' && plan?.dryRun === 'Rejected') return { ok: false, reason: `the undo plan's dry run was rejected: ${plan.dryRunMessage ?? ''}` };
      if (g?.state === 'Stalled' && plan?.dryRun === 'Accepted' && record.stalledAt !== undefined) {
        if (g.cause !== 'ImagePullFailure') return { ok: false, reason: `stalled with cause ${g.cause ?? '?'}, expected ImagePullFailure` };
        if (plan.toHash !== a.original) return { ok: false, reason: `the undo plan restores ${plan.toHash}, expected the original ${a.original}` };
        if (!/Would restore/.test(g.message ?? '')) return { ok: false, reason: `the guard's message does not state the undo plan: ${g.message ?? ''}` };
        if (oneGeneration(s)) return { ok: false, reason: 'the DaemonSet is on one generation again, yet nothing should have changed it' };
        if (record.blocked.length !== 1) return { ok: false, reason: `expected exactly one blocked node, got ${JSON.stringify(record.blocked)}` };
        return { ok: true, reason: '' };
      }
    }
    if (Date.now() > deadline) {
      return { ok: false, reason: `timed out ${opts.timeoutMs / 1000}s after the image change; guard state ${g?.state ?? 'none'}: ${g?.message ?? ''}` };
    }
    // A polling interval, not a stand-in for a condition: every condition above is re-read each tick.
    await new Promise((r) => setTimeout(r, 500));
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
