/**
 * The cluster a demo story runs on, shared by the stories told on the common local control plane (or
 * the cluster --kubeconfig names): connecting to it and installing the CRDs, a fresh namespace with the
 * operator watching it, and the clean-up at the end.
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { status as clusterStatus } from '../cluster/components.js';
import { down, up } from '../cluster/controlPlane.js';
import { kubectlRunner, waitForCrdsEstablished, type Kubectl } from '../cluster/kubectl.js';
import { createNamespace } from '../cluster/namespaces.js';
import { Operator, ROOT, StoryFailed, onInterrupt, out, say, section, stopPrevious } from './shared.js';

/** The kwok nodes of the local control plane a story runs on. */
export const LOCAL_NODES = ['node-1', 'node-2', 'node-3'];

/** What the cluster steps read of a story's options. */
export interface ClusterOptions {
  /** An existing cluster's kubeconfig; absent: the local control plane. */
  kubeconfig?: string;
  /** The local control plane with its real node (a real kubelet over containerd). */
  realNode: boolean;
  keep: boolean;
  namespace: string;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pinned kubectl if cluster/build.sh has built it, found without running the build (a cold
 * build takes tens of minutes and an existing cluster does not need one), else kubectl on PATH. The
 * cache key is computed exactly as build.sh computes it.
 */
function findKubectl(): string | undefined {
  const c = path.join(ROOT, 'cluster');
  const files = ['versions.env', 'k8s/go.mod', 'k8s/go.sum', 'etcd/go.mod', 'etcd/go.sum', 'etcd/main.go'].map((f) => path.join(c, f));
  if (files.every((f) => existsSync(f))) {
    // build.sh's key covers versions.env up to its "# Tools" line (`sed '/^# Tools$/,$d'`), then the modules.
    const lines = readFileSync(files[0]!, 'utf8').split('\n');
    const tools = lines.indexOf('# Tools');
    const pins = Buffer.from(
      tools < 0
        ? lines.join('\n')
        : lines
            .slice(0, tools)
            .map((l) => `${l}\n`)
            .join(''),
    );
    const key = createHash('sha256')
      .update(Buffer.concat([pins, ...files.slice(1).map((f) => readFileSync(f))]))
      .digest('hex')
      .slice(0, 16);
    const cacheRoot =
      process.env.ROLLOUT_GUARD_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'rollout-guard');
    const pinned = path.join(cacheRoot, key, 'bin', 'kubectl');
    if (isExecutable(pinned)) return pinned;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'kubectl'))) return path.join(dir, 'kubectl');
  }
  return undefined;
}

/** The cluster a story runs on, and how to reach it. */
export interface StoryCluster {
  kubeconfig: string;
  kubectl: Kubectl;
  kubectlBin: string;
  /** The demo started the local control plane (and so stops it again). */
  startedCluster: boolean;
}

/** 1. The cluster (the one --kubeconfig names, or the local control plane, started if need be) and the CRDs. */
export async function connect(opts: ClusterOptions): Promise<StoryCluster> {
  const external = opts.kubeconfig !== undefined;
  let cluster: StoryCluster;
  section(
    external
      ? `Using the cluster in ${opts.kubeconfig}`
      : 'Local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)',
  );
  if (opts.kubeconfig) {
    const kubeconfig = opts.kubeconfig;
    const bin = findKubectl();
    if (!bin) throw new StoryFailed('no kubectl: install one on PATH, or build the pinned one with `npm run cluster:build`');
    const kubectl = kubectlRunner(path.dirname(bin), kubeconfig);
    cluster = { kubeconfig, kubectl, kubectlBin: bin, startedCluster: false };
    out(`    kubectl: ${bin}`);
    const v = await kubectl(['get', 'nodes', '--no-headers'], { allowFail: true });
    if (v.code !== 0) throw new StoryFailed(`cannot reach the cluster: ${v.stderr.trim()}`);
    out(`    ${v.stdout.trim().split('\n').length} node(s)`);
  } else {
    // Only a hint for the reader; whether the demo started the cluster (and so stops it) is up()'s answer.
    const before = await clusterStatus();
    if (!before.components.some((c) => c.alive)) {
      out(
        '    not running: starting it (the first run on a machine builds the binaries from Go modules first: tens of minutes on 2 cores, progress below)',
      );
    }
    const info = await up({ nodes: LOCAL_NODES.length, realNode: opts.realNode, log: (l) => out(`    ${l}`) });
    cluster = {
      kubeconfig: info.kubeconfig,
      kubectl: kubectlRunner(info.binDir, info.kubeconfig),
      kubectlBin: path.join(info.binDir, 'kubectl'),
      startedCluster: info.mode !== 'reused',
    };
  }
  section('CRDs');
  out(
    (await cluster.kubectl(['apply', '--server-side', '--force-conflicts', '-k', path.join(ROOT, 'config/crd')])).stdout
      .trimEnd()
      .replace(/^/gm, '    '),
  );
  await waitForCrdsEstablished(cluster.kubectl, ['rolloutguards.rolloutguard.dev']);
  return cluster;
}

/**
 * The clean-up, once, at the end or on Ctrl-C: with --keep the operator is left running; otherwise it is
 * stopped, the namespace deleted, and the local cluster stopped if the demo started it.
 */
export async function cleanUp(opts: ClusterOptions, cluster: StoryCluster, op: Operator | undefined, interrupted: boolean): Promise<void> {
  const { kubectl } = cluster;
  const ns = opts.namespace;
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
  if (cluster.startedCluster) {
    await down({ log: (l) => say(`    ${l}`) });
    say('    the local cluster was not running before the demo, so it was stopped again (npm run cluster:up keeps one running)');
  } else if (opts.kubeconfig === undefined) {
    say('    the local cluster was already running before the demo and is left running (npm run cluster:down stops it)');
  }
}

/** 2. A fresh namespace, and the operator watching it (one a previous --keep run left is stopped first). */
export async function startOperator(kubectl: Kubectl, kubeconfig: string, ns: string, stateDir: string): Promise<Operator> {
  section(`Namespace ${ns} and the operator`);
  await stopPrevious(path.join(stateDir, 'operator.pid'));
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=90s']);
  await createNamespace(kubectl, ns);
  const op = await Operator.start(kubeconfig, ns, stateDir);
  out(`    operator running: pid ${op.pid}, watching namespace ${ns}, log ${op.logFile}`);
  return op;
}

/**
 * The story's clean-up ({@link cleanUp}), run once: at the end, or on Ctrl-C (then `signal.interrupted`).
 * `operator()` is read when it runs, so an operator started after this call is stopped too.
 */
export function cleanupOnce(
  opts: ClusterOptions,
  cluster: StoryCluster,
  operator: () => Operator | undefined,
): { cleanup: () => Promise<void>; signal: { readonly interrupted: boolean } } {
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> => (cleaning ??= cleanUp(opts, cluster, operator(), signal.interrupted));
  const signal = onInterrupt(cleanup);
  return { cleanup, signal };
}
