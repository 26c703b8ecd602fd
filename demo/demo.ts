#!/usr/bin/env node
/**
 * `npm run demo`: five stories, each told in a minute or two on a local control plane.
 *
 * broken-image (the default, this file): the quiet stall.
 *   1. start (or reuse) the local control plane and install the CRDs;
 *   2. run the operator, scoped to a fresh namespace;
 *   3. create the `decoder` DaemonSet (maxUnavailable 1) and a RolloutGuard (suspect 10 s, stalled 20 s);
 *   4. once 3/3 are ready, change the image to one that cannot be pulled;
 *   5. watch the guard notice, explain and (with onStall.action Undo) undo it;
 *   6. print the real kubectl output, the Events and a summary, and exit 0 only if all of that happened.
 *
 * dead-nodes (`--story dead-nodes`, deadNodes.ts): kubelets die mid-rollout of a good image; the guard
 * calls it Stalled, blames the nodes and does not undo; thawed, the rollout completes.
 *
 * real-node (`--story real-node`): the broken-image story on the real node (cluster/realNode.ts), a real
 * kubelet over containerd: a busybox DaemonSet rolled to an image whose registry does not resolve.
 *
 * statefulset (`--story statefulset`, statefulSet.ts): a StatefulSet's broken rollout, reverted by hand
 * with `kubectl rollout undo` and left stuck under OrderedReady; the guard finishes the rollback
 * (`--real-node`: the same on the real node).
 *
 * deployment (`--story deployment`, deployment.ts): a Deployment rolled to an image that cannot be
 * pulled; an Undo guard calls it Stalled and undoes it as `kubectl rollout undo` does, and the Deployment
 * controller scales the previous ReplicaSet back up and the broken one down.
 *
 * On a terminal the live view is redrawn in place; otherwise (CI, a pipe, CI=true) it prints one
 * timestamped line per change. See `--help` for the flags.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDuration } from '../src/cli/args.js';
import type { RunningDashboard } from '../src/cli/dashboard.js';
import type { GuardStatus } from '../src/api/types.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import { UsageError } from '../src/runtime/config.js';
import type { Kubectl } from '../cluster/kubectl.js';
import { waitFor } from '../cluster/wait.js';
import { LOCAL_IMAGES, REAL_NODE_NAME } from '../cluster/realNode.js';
import { DEAD_NODES_CLUSTER_DIR, deadNodesStory } from './deadNodes.js';
import { DEFAULT_NAMESPACE, LiveView, NAME, Operator, daemonSet, out, outputMode, rolloutGuard, section, show } from './shared.js';
import { deploymentStory } from './deployment.js';
import { serveUntilInterrupted, startStoryDashboard } from './dashboard.js';
import { statefulSetStory } from './statefulSet.js';
import { LOCAL_NODES, cleanupOnce, connect, startOperator, type StoryCluster } from './storyCluster.js';
import { oneGeneration, readSnapshot, style, summary, type Snapshot, type StoryRecord } from './view.js';

/** The nodes a local story's DaemonSet is pinned to: the three kwok nodes, or the real node alone. */
const storyNodes = (opts: Options): string[] => (opts.realNode ? [REAL_NODE_NAME] : LOCAL_NODES);
const TIMINGS = { suspectAfterSeconds: 10, progressDeadlineSeconds: 20 };

const USAGE = `usage: npm run demo [-- OPTIONS]   (or: node dist/demo/demo.js [OPTIONS])

Stories of a rollout and rollout-guard:
  broken-image   (the default) the rollout stalls quietly on one node; the guard notices, explains it
                 and undoes it
  dead-nodes     kubelets die mid-rollout of a good image; the guard calls it Stalled, says the nodes are
                 at fault and does not undo; once the kubelets are back, the rollout completes
  real-node      broken-image on the real node: a real kubelet and containerd (started with the local
                 control plane, as npm run cluster:up -- --real-node does), an image whose registry does
                 not resolve; the guard quotes what the runtime said and undoes it
  statefulset    a StatefulSet (OrderedReady) rolled to an image that cannot be pulled; a Report guard
                 names the way out; kubectl rollout undo restores the template but leaves the broken pod
                 stuck (kubectl rollout status times out); switched to Undo, the guard evicts that pod
                 and the StatefulSet is whole again on one revision
  deployment     a Deployment (3 replicas, RollingUpdate, maxSurge 25 %) rolled to an image that cannot be
                 pulled; an Undo guard calls it Stalled (ImagePullFailure, the revision at fault) and
                 undoes it as kubectl rollout undo does: the previous ReplicaSet is scaled back to 3, the
                 broken one to 0, and kubectl rollout status completes

  --story broken-image|dead-nodes|real-node|statefulset|deployment   which story to tell (default broken-image)
  --keep                 leave the cluster, the namespace and the operator running, and print how to explore them
  --dashboard            (broken-image) serve the dashboard beside the story and print its URL; on a terminal it
                         stays up after the story until Ctrl-C
  --namespace NS         namespace to (re)create for the demo (default ${DEFAULT_NAMESPACE})
  --timeout DURATION     give up if the story has not completed this long after the image change (default 3m)

broken-image (and real-node, which takes --action only):
  --action Undo|Report   what the guard does once the rollout is stalled (default Undo)
  --kubeconfig PATH      run on an existing cluster instead of the local control plane
                         (images default to registry.k8s.io/pause:3.10 and a tag of it that does not exist)
  --image IMAGE          the good image (default registry.local/decoder:1, or the pause image with --kubeconfig)
  --broken-image IMAGE   the image that cannot be pulled (default registry.local/decoder:2-broken)

statefulset:
  --real-node            tell it on the real node (2 replicas of a busybox StatefulSet; the broken image's
                         registry does not resolve) instead of the kwok nodes (3 replicas)

dead-nodes runs on a private control plane of its own, with the node lifecycle controller, in
${DEAD_NODES_CLUSTER_DIR}/ (${DEAD_NODES_CLUSTER_DIR}-NS/ with another --namespace): 2 nodes that stay
up and 2 whose kubelets it freezes. It starts that control plane and removes it at the end (--keep leaves
it running). It cannot run on an existing cluster (--kubeconfig): it needs to freeze kubelets.

Exit status 0 only if the story completed as expected (broken-image with Undo: RolledBack, one generation
on the original revision; with Report: Stalled with cause ImagePullFailure and an undo plan; dead-nodes:
Stalled with cause NodeNotReady and owner Node, the undo skipped as NotTheRevision, never undone, then
Healthy on revision 2; statefulset: Stalled with cause ImagePullFailure and both commands named, the
revert by hand left stuck with the same broken pod, then that one pod evicted, no undo of the guard's
own, all replicas Ready on the original revision, the other pods untouched; deployment: Stalled with
cause ImagePullFailure and owner Revision, exactly one undo, RolledBack with the template on the good
image, the old ReplicaSet at 3 and the broken one at 0, every pod on one pod-template-hash, and kubectl
rollout status complete); 2 for a bad flag. Live view redrawn in place on a terminal; plain timestamped
lines when stdout is not a terminal or CI=true.`;

const STORIES = ['broken-image', 'dead-nodes', 'real-node', 'statefulset', 'deployment'] as const;
/**
 * broken-image and real-node are told by {@link brokenImageStory} below, dead-nodes by
 * {@link deadNodesStory}, statefulset by {@link statefulSetStory}, deployment by {@link deploymentStory}.
 */
type Story = (typeof STORIES)[number];

interface Options {
  story: Story;
  action: 'Undo' | 'Report';
  /** On the local control plane's real node: --story real-node, or --real-node. */
  realNode: boolean;
  keep: boolean;
  /** --dashboard: the dashboard served beside the story (dashboard.ts). */
  dashboard: boolean;
  kubeconfig?: string;
  namespace: string;
  image: string;
  brokenImage: string;
  timeoutMs: number;
}

function parseArgs(args: readonly string[]): Options | 'help' {
  let story: Story = 'broken-image';
  let action: Options['action'] = 'Undo';
  let keep = false;
  let dashboard = false;
  let realNode = false;
  let kubeconfig: string | undefined;
  let namespace = DEFAULT_NAMESPACE;
  let image: string | undefined;
  let brokenImage: string | undefined;
  let timeoutMs = 180_000;
  /** Flags only the broken-image story takes, as given. */
  const brokenImageOnly: string[] = [];
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
      case '--dashboard':
        dashboard = true;
        brokenImageOnly.push(flag);
        break;
      case '--real-node':
        realNode = true;
        break;
      case '--story': {
        const v = value();
        if (!(STORIES as readonly string[]).includes(v))
          throw new UsageError(`--story wants ${STORIES.join(', ')}, got ${JSON.stringify(v)}`);
        story = v as Story;
        break;
      }
      case '--action': {
        const v = value();
        const norm = v.toLowerCase() === 'undo' ? 'Undo' : v.toLowerCase() === 'report' ? 'Report' : undefined;
        if (!norm) throw new UsageError(`--action wants Undo or Report, got ${JSON.stringify(v)}`);
        action = norm;
        brokenImageOnly.push(flag);
        break;
      }
      case '--kubeconfig':
        kubeconfig = path.resolve(value());
        brokenImageOnly.push(flag);
        break;
      case '-n':
      case '--namespace':
        namespace = value();
        if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63)
          throw new UsageError(`--namespace: ${JSON.stringify(namespace)} is not a namespace name`);
        break;
      case '--image':
        image = value();
        brokenImageOnly.push(flag);
        break;
      case '--broken-image':
        brokenImage = value();
        brokenImageOnly.push(flag);
        break;
      case '--timeout':
        timeoutMs = parseDuration('--timeout', value()) * 1000;
        break;
      default:
        throw new UsageError(`unknown argument ${a}`);
    }
  }
  if (realNode && story !== 'statefulset')
    throw new UsageError(`--real-node: only for --story statefulset (the broken-image story on the real node is --story real-node)`);
  if (story === 'statefulset') {
    const others = brokenImageOnly.filter((f) => f !== '--kubeconfig');
    if (others.length > 0)
      throw new UsageError(`${[...new Set(others)].join(', ')}: not for --story statefulset, which tells its own steps`);
    if (kubeconfig !== undefined)
      throw new UsageError(
        '--story statefulset runs on the local control plane (its kwok nodes or, with --real-node, its real node), not --kubeconfig',
      );
  }
  if (story === 'deployment') {
    if (kubeconfig !== undefined)
      throw new UsageError('--story deployment runs on the local control plane (its kwok nodes), not --kubeconfig');
    if (brokenImageOnly.length > 0)
      throw new UsageError(`${[...new Set(brokenImageOnly)].join(', ')}: not for --story deployment, which tells its own steps`);
  }
  if (story === 'dead-nodes') {
    if (kubeconfig !== undefined) {
      throw new UsageError(
        '--story dead-nodes cannot run on an existing cluster (--kubeconfig): it freezes kubelets, which only its own local control plane lets it do',
      );
    }
    // Silently ignoring them would tell a story the user did not ask for.
    if (brokenImageOnly.length > 0) throw new UsageError(`${[...new Set(brokenImageOnly)].join(', ')}: only for --story broken-image`);
  }
  if (story === 'real-node') {
    const others = brokenImageOnly.filter((f) => f !== '--action' && f !== '--dashboard');
    if (others.length > 0)
      throw new UsageError(
        `${[...new Set(others)].join(', ')}: not for --story real-node, which runs its own images on the local real node`,
      );
  }
  // On the local control plane kwok decides pod fates by image name; a real cluster really pulls, so the
  // good image must exist there and the broken one must not.
  const external = kubeconfig !== undefined;
  const opts: Options = {
    story,
    action,
    realNode: realNode || story === 'real-node',
    keep,
    dashboard,
    namespace,
    image: image ?? (external ? 'registry.k8s.io/pause:3.10' : story === 'real-node' ? LOCAL_IMAGES.busybox : 'registry.local/decoder:1'),
    brokenImage:
      brokenImage ??
      (external
        ? 'registry.k8s.io/pause:0.0-broken-by-rollout-guard-demo'
        : story === 'real-node'
          ? 'registry.invalid/decoder:2'
          : 'registry.local/decoder:2-broken'),
    timeoutMs,
  };
  if (kubeconfig) opts.kubeconfig = kubeconfig;
  return opts;
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
  if (opts.story === 'dead-nodes') return deadNodesStory(opts);
  if (opts.story === 'statefulset') return statefulSetStory(opts);
  if (opts.story === 'deployment') return deploymentStory(opts);
  return brokenImageStory(opts);
}

/** The default story: a broken image stalls the rollout on one node; the guard notices, explains and undoes (or reports) it. */
async function brokenImageStory(opts: Options): Promise<number> {
  const { ci, color } = outputMode();
  const st = style(color);
  const ns = opts.namespace;
  const external = opts.kubeconfig !== undefined;

  const cluster = await connect(opts);
  const { kubeconfig, kubectl } = cluster;
  const client = ApiClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  const stateDir = path.join(tmpdir(), 'rollout-guard-demo', ns);
  let op: Operator | undefined;
  let dash: RunningDashboard | undefined;
  const { cleanup, signal } = cleanupOnce(opts, cluster, () => op);

  let ok = false;
  let reason = '';
  try {
    op = await startOperator(kubectl, kubeconfig, ns, stateDir);
    if (opts.dashboard) dash = await startStoryDashboard(kubeconfig, ns);
    const { original, desired } = await deployHealthy(kubectl, client, opts);
    const t0 = await breakRollout(kubectl, opts);
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
    // --- 5. The live view, in watch() ------------------------------------------------------------
    const story = await watch({
      client,
      ns,
      pinned: external ? [] : storyNodes(opts),
      t0,
      opts,
      record,
      op,
      ci,
      st,
      original: original.hash,
    });
    ({ ok, reason } = story.ok ? await waitForEvents(kubectl, opts) : story);
    await showOutcome(kubectl, opts, record, op, ok);
  } catch (e) {
    ok = false;
    reason = e instanceof Error ? e.message : String(e);
    if (op) out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
  } finally {
    client.close();
  }

  out('');
  out(ok ? `demo: OK (${opts.action}): the story completed as expected` : `demo: FAILED (${opts.action}): ${reason}`);
  if (dash) {
    await serveUntilInterrupted(dash, outputMode().ci);
    await dash.stop();
  }
  if (opts.keep) {
    op?.detach();
    printKeepHints(opts, cluster, op);
  } else if (!signal.interrupted) {
    await cleanup();
  }
  return ok ? 0 : 1;
}

/** 3. The DaemonSet, all ready, and its RolloutGuard, Healthy: returns the revision it is on and DESIRED. */
async function deployHealthy(
  kubectl: Kubectl,
  client: ApiClient,
  opts: Options,
): Promise<{ original: StoryRecord['original']; desired: number }> {
  const ns = opts.namespace;
  const external = opts.kubeconfig !== undefined;
  section(`DaemonSet ${NAME} (maxUnavailable 1, image ${opts.image}) and its RolloutGuard`);
  const pin = { key: 'kubernetes.io/hostname', values: storyNodes(opts) };
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify(daemonSet(ns, opts.image, external ? {} : { pin, realNode: opts.realNode })),
  });
  const pinned = external ? [] : storyNodes(opts);
  const now = (): number => Date.now();
  const healthy = await waitFor(
    async () => {
      const s = await readSnapshot(client, ns, NAME, pinned, now);
      return oneGeneration(s) && s.ds && (external || s.ds.desired === pinned.length) ? s : undefined;
    },
    { timeoutMs: 120_000, describe: `ds/${NAME} ${external ? 'all' : `${pinned.length}/${pinned.length}`} ready` },
  );
  out(`    ds/${NAME}: ${healthy.ds?.ready}/${healthy.ds?.desired} ready`);
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(rolloutGuard(ns, opts.action, TIMINGS)) });
  out(
    `    rolloutguard/${NAME}: suspectAfterSeconds ${TIMINGS.suspectAfterSeconds}, progressDeadlineSeconds ${TIMINGS.progressDeadlineSeconds}, onStall.action ${opts.action}`,
  );
  const baseline = await waitFor(
    async () => {
      const s = await readSnapshot(client, ns, NAME, pinned, now);
      return s.guard?.state === 'Healthy' && s.guard.currentRevision ? s : undefined;
    },
    { timeoutMs: 30_000, describe: `rolloutguard/${NAME} Healthy` },
  );
  out(`    guard Healthy: ${baseline.guard?.message ?? ''}`);
  return { original: baseline.guard!.currentRevision!, desired: baseline.ds!.desired };
}

/** 4. The bad rollout: the image changed to one that cannot be pulled. Returns the time just before the change. */
async function breakRollout(kubectl: Kubectl, opts: Options): Promise<number> {
  const ns = opts.namespace;
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
  return t0;
}

/** The operator records its Events asynchronously: waits briefly for the ones the story is about. */
async function waitForEvents(kubectl: Kubectl, opts: Options): Promise<{ ok: boolean; reason: string }> {
  const wanted = opts.action === 'Undo' ? ['RolloutStalled', 'UndoComplete'] : ['RolloutStalled'];
  try {
    await waitFor(
      async () => {
        const r = await kubectl(['get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'jsonpath={.items[*].reason}'], {
          ns: opts.namespace,
        });
        const have = new Set(r.stdout.split(/\s+/));
        return wanted.every((w) => have.has(w));
      },
      { timeoutMs: 15_000, describe: `Events ${wanted.join(', ')}` },
    );
    return { ok: true, reason: '' };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

/** 6. The real kubectl output, the Events and the summary (with the operator's log when the story failed). */
async function showOutcome(kubectl: Kubectl, opts: Options, record: StoryRecord, op: Operator, ok: boolean): Promise<void> {
  const ns = opts.namespace;
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
    // The guard's own part of it: the deadline counts from the last progress, however late the cluster made it.
    if (record.lastProgressAt !== undefined)
      out(
        `time without progress at the verdict (Stalled − last progress): ${((record.stalledAt - record.lastProgressAt) / 1000).toFixed(1)} s`,
      );
    if (opts.action === 'Undo')
      out(
        `time to one generation again (from the image change): ${record.oneGenerationAt !== undefined ? `${(record.oneGenerationAt / 1000).toFixed(1)} s` : 'never'}`,
      );
  }
}

/** With --keep: what is left running, and how to explore and stop it. */
function printKeepHints(opts: Options, cluster: StoryCluster, op: Operator | undefined): void {
  const ns = opts.namespace;
  const external = opts.kubeconfig !== undefined;
  const binDir = path.dirname(cluster.kubectlBin);
  section('Still running (--keep): explore with');
  out(`    export KUBECONFIG=${cluster.kubeconfig}`);
  out(`    export PATH=${binDir}:$PATH   # the kubectl the demo used`);
  out(`    kubectl get ds,pods -n ${ns} -o wide`);
  out(`    kubectl get rg -n ${ns} -o wide`);
  out(`    kubectl describe rg ${NAME} -n ${ns}`);
  out(`    kubectl get events -n ${ns} --field-selector involvedObject.name=${NAME}`);
  out(
    `    kubectl set image ds/${NAME} -n ${ns} ${NAME}=${external ? 'registry.k8s.io/pause:3.9' : 'registry.local/decoder:3'}            # a rollout that completes`,
  );
  out(
    `    kubectl set image ds/${NAME} -n ${ns} ${NAME}=${external ? 'registry.k8s.io/pause:0.0-broken-again' : 'registry.local/decoder:4-broken'}  # another that stalls`,
  );
  if (op) out(`    tail -f ${op.logFile}  # the operator's log`);
  out('  stop with');
  if (op) out(`    kill ${op.pid}  # the operator`);
  out(`    kubectl delete namespace ${ns}`);
  if (!external) out('    npm run cluster:down  # the local cluster');
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
  const header = `namespace ${a.ns} · onStall.action ${opts.action} · suspect ${record.suspectAfterSeconds}s, stalled ${record.progressDeadlineSeconds}s`;
  const view = new LiveView({ ci: a.ci, st: a.st, t0: a.t0, header });
  const eventAt = (s: Snapshot, reason: string): number | undefined => {
    const e = s.events.find((x) => x.reason === reason && x.at >= a.t0);
    return e ? e.at - a.t0 : undefined;
  };

  for (;;) {
    const s = await readSnapshot(a.client, a.ns, NAME, a.pinned, () => Date.now());
    const g: GuardStatus | undefined = s.guard;
    view.draw(s);

    // --- Record what happened. ---
    if (g?.rollout?.toRevision && g.rollout.toRevision.hash !== a.original && !record.broken) record.broken = { ...g.rollout.toRevision };
    // The split while the bad rollout is in flight: by definition of "no progress" it is the split at the stall.
    if (g && IN_FLIGHT.has(g.state ?? '') && !g.rollout?.rollback && !g.lastUndo) {
      record.blocked = [...(g.blockedNodes ?? [])];
      record.empty = [...(g.emptyNodes ?? [])];
      if (s.ds) record.stalledColumns = s.ds;
      record.stalledSplit = (g.generations ?? []).map((x) => ({
        ...(x.revision !== undefined ? { revision: x.revision } : {}),
        hash: x.hash,
        nodes: x.nodes,
      }));
      if (g.cause) record.cause = g.cause;
      const progress = Date.parse(g.rollout?.lastProgressAt ?? '');
      if (Number.isFinite(progress)) record.lastProgressAt = progress - a.t0;
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
      if (u && (u.result === 'Failed' || u.result === 'RollbackStalled'))
        return { ok: false, reason: `the undo ended ${u.result}: ${u.message}` };
      if (g?.state === 'RolledBack' && u?.result === 'Complete' && record.oneGenerationAt !== undefined) {
        if (record.stalledAt === undefined) return { ok: false, reason: 'rolled back without a RolloutStalled event' };
        if (record.cause !== 'ImagePullFailure')
          return {
            ok: false,
            reason: `rolled back, but the stall was classified ${record.cause ?? 'without a cause'}, expected ImagePullFailure`,
          };
        if (record.blocked.length !== 1)
          return { ok: false, reason: `expected exactly one blocked node at the stall, got ${JSON.stringify(record.blocked)}` };
        if (s.ds?.desired !== record.desired) return { ok: false, reason: `DESIRED is ${s.ds?.desired}, expected ${record.desired}` };
        return { ok: true, reason: '' };
      }
    } else {
      if (g?.lastUndo || g?.state === 'RollingBack' || g?.state === 'RolledBack')
        return { ok: false, reason: 'onStall.action is Report, yet the guard undid the rollout' };
      const plan = g?.undoPlan;
      if (g?.state === 'Stalled' && plan?.dryRun === 'Rejected')
        return { ok: false, reason: `the undo plan's dry run was rejected: ${plan.dryRunMessage ?? ''}` };
      if (g?.state === 'Stalled' && plan?.dryRun === 'Accepted' && record.stalledAt !== undefined) {
        if (g.cause !== 'ImagePullFailure') return { ok: false, reason: `stalled with cause ${g.cause ?? '?'}, expected ImagePullFailure` };
        if (plan.toHash !== a.original)
          return { ok: false, reason: `the undo plan restores ${plan.toHash}, expected the original ${a.original}` };
        if (!/Would restore/.test(g.message ?? ''))
          return { ok: false, reason: `the guard's message does not state the undo plan: ${g.message ?? ''}` };
        if (oneGeneration(s)) return { ok: false, reason: 'the DaemonSet is on one generation again, yet nothing should have changed it' };
        if (record.blocked.length !== 1)
          return { ok: false, reason: `expected exactly one blocked node, got ${JSON.stringify(record.blocked)}` };
        return { ok: true, reason: '' };
      }
    }
    if (Date.now() > deadline) {
      return {
        ok: false,
        reason: `timed out ${opts.timeoutMs / 1000}s after the image change; guard state ${g?.state ?? 'none'}: ${g?.message ?? ''}`,
      };
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
