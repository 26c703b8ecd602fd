/**
 * `npm run demo -- --story statefulset`: the rollback `kubectl rollout undo` leaves undone.
 *   1. start (or reuse) the local control plane and install the CRDs (`--real-node`: with its real node);
 *   2. run the operator, scoped to a fresh namespace;
 *   3. create the `store` StatefulSet (OrderedReady; 3 replicas on the kwok nodes, 2 on the real node) and
 *      a Report guard, and wait until both are healthy;
 *   4. change the image to one that cannot be pulled: the highest ordinal fails, the guard calls it
 *      Stalled and names the two commands that finish it by hand;
 *   5. run the first of them, `kubectl rollout undo`, as a person would: the template is restored, yet
 *      the broken pod stays (the controller waits for it to become Ready before it replaces it), and
 *      `kubectl rollout status` times out; the guard says so;
 *   6. set the guard to Undo: it evicts that one pod through the Eviction API and the controller recreates
 *      it on the restored revision;
 *   7. print the real kubectl output and the Events, and exit 0 only if all of that happened.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { STATEFULSET_KIND } from '../src/api/names.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import type { Kubectl } from '../cluster/kubectl.js';
import { rolloutGuardManifest, statefulSetManifest, toleration } from '../cluster/manifests.js';
import { LOCAL_IMAGES, REAL_NODE_NAME, REAL_NODE_TAINT } from '../cluster/realNode.js';
import { waitFor } from '../cluster/wait.js';
import { LiveView, Operator, StoryFailed, out, outputMode, section, show } from './shared.js';
import { LOCAL_NODES, cleanupOnce, connect, startOperator, type ClusterOptions } from './storyCluster.js';
import { oneGeneration, readSnapshot, style, type Snapshot } from './view.js';

/** The StatefulSet, its pods' app label and its RolloutGuard are all called this. */
const STORE = 'store';
const TIMINGS = { suspectAfterSeconds: 10, progressDeadlineSeconds: 20 };
/** How long `kubectl rollout status` is given to show the revert by hand does not finish. */
const STATUS_WAIT_SECONDS = 20;

export interface StatefulSetStoryOptions extends ClusterOptions {
  timeoutMs: number;
}

/** The images and size of the story: kwok decides pod fates by image name; the real node really pulls. */
function cast(realNode: boolean): { good: string; broken: string; replicas: number; nodes: string[] } {
  return realNode
    ? { good: LOCAL_IMAGES.busybox, broken: 'registry.invalid/store:2', replicas: 2, nodes: [REAL_NODE_NAME] }
    : { good: 'registry.local/store:1', broken: 'registry.local/store:2-broken', replicas: 3, nodes: LOCAL_NODES };
}

/** A pod as the story tracks it: by UID, so a replacement is told from the pod it replaced. */
interface PodIdentity {
  name: string;
  uid: string;
  revision: string;
  ready: boolean;
}

/** What one story run needs at every step. */
interface Scene {
  opts: StatefulSetStoryOptions;
  kubectl: Kubectl;
  client: ApiClient;
  op: Operator;
  ns: string;
  ordinals: string[];
  view?: LiveView;
  t0: number;
}

export async function statefulSetStory(opts: StatefulSetStoryOptions): Promise<number> {
  const ns = opts.namespace;
  const cluster = await connect(opts);
  const client = ApiClient.fromKubeConfig(loadKubeConfig(cluster.kubeconfig));
  let op: Operator | undefined;
  const { cleanup, signal } = cleanupOnce(opts, cluster, () => op);
  let ok = false;
  let reason = '';
  try {
    op = await startOperator(cluster.kubectl, cluster.kubeconfig, ns, path.join(tmpdir(), 'rollout-guard-demo', ns));
    const { replicas } = cast(opts.realNode);
    const ordinals = Array.from({ length: replicas }, (_, i) => `${STORE}-${i}`);
    const sc: Scene = { opts, kubectl: cluster.kubectl, client, op, ns, ordinals, t0: Date.now() };
    await tell(sc);
    ok = true;
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
    if (op) out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
  } finally {
    client.close();
  }
  out('');
  out(ok ? 'demo: OK (statefulset): the story completed as expected' : `demo: FAILED (statefulset): ${reason}`);
  if (opts.keep) {
    op?.detach();
    out(`\n--keep: the operator (pid ${op?.pid ?? '?'}) and namespace ${ns} are left running; kubectl get sts,pods,rg -n ${ns}`);
  } else if (!signal.interrupted) {
    await cleanup();
  }
  return ok ? 0 : 1;
}

/** Steps 3 to 7; throws StoryFailed at the first thing that did not happen as the story says. */
async function tell(sc: Scene): Promise<void> {
  const { good, broken, replicas } = cast(sc.opts.realNode);
  const original = await deployHealthy(sc, good);
  const stuckName = sc.ordinals[replicas - 1]!;

  // 4. The broken rollout, judged by a Report guard.
  section(`Changing the image to ${broken}`);
  out(`$ kubectl set image statefulset/${STORE} ${STORE}=${broken} -n ${sc.ns}`);
  sc.t0 = Date.now();
  await sc.kubectl(['set', 'image', `statefulset/${STORE}`, `${STORE}=${broken}`], { ns: sc.ns });
  const ioHeader = `namespace ${sc.ns} · StatefulSet ${STORE} (OrderedReady) · suspect ${TIMINGS.suspectAfterSeconds}s, stalled ${TIMINGS.progressDeadlineSeconds}s`;
  sc.view = new LiveView({ ci: outputMode().ci, st: style(outputMode().color), t0: sc.t0, header: ioHeader });
  const finishByHand = new RegExp(
    `kubectl rollout undo statefulset/${STORE} -n ${sc.ns} --to-revision=\\d+, then kubectl delete pod ${stuckName} -n ${sc.ns}`,
  );
  const stalled = await follow(sc, `Stalled (ImagePullFailure) naming the commands that finish it`, (s) => {
    const g = s.guard;
    if (g?.state !== 'Stalled') return false;
    if (g.cause !== 'ImagePullFailure') throw new StoryFailed(`Stalled with cause ${g.cause ?? '?'}, expected ImagePullFailure`);
    return finishByHand.test(g.message ?? '');
  });
  sc.view.leave();
  section('The guard (Report) names the way out');
  out(`    ${stalled.guard?.message ?? ''}`);
  const stuck = (await pods(sc)).get(stuckName);
  if (!stuck || stuck.ready || stuck.revision === original)
    throw new StoryFailed(`${stuckName} should be the broken pod, not Ready on the new revision: ${JSON.stringify(stuck)}`);
  const before = await pods(sc);

  // 5. The revert by hand, and the pod it leaves behind.
  section('A person runs the first command: kubectl rollout undo');
  await show(sc.kubectl, ['rollout', 'undo', `statefulset/${STORE}`], sc.ns);
  out(`\n$ kubectl rollout status statefulset/${STORE} --timeout=${STATUS_WAIT_SECONDS}s -n ${sc.ns}`);
  const status = await sc.kubectl(['rollout', 'status', `statefulset/${STORE}`, `--timeout=${STATUS_WAIT_SECONDS}s`], {
    ns: sc.ns,
    allowFail: true,
  });
  out(`${status.stdout}${status.stderr}`.trimEnd());
  if (status.code === 0) throw new StoryFailed('kubectl rollout status completed after the revert by hand: nothing was left stuck');
  const afterRevert = (await pods(sc)).get(stuckName);
  if (afterRevert?.uid !== stuck.uid || afterRevert.ready)
    throw new StoryFailed(`after the revert ${stuckName} was replaced or turned Ready by itself: ${JSON.stringify(afterRevert)}`);
  out(
    `    ${STATUS_WAIT_SECONDS} s after the revert ${stuckName} is still the same pod (uid ${stuck.uid}), on the broken revision, not Ready.`,
  );
  const said = await follow(sc, `the guard saying ${stuckName} is left behind`, (s) =>
    new RegExp(`Reverted by a person or tool .*but ${stuckName} is still on`).test(s.guard?.message ?? ''),
  );
  if (said.guard?.state === 'Healthy') throw new StoryFailed('the guard called the stuck revert Healthy');
  sc.view.leave();
  section(`The guard (still Report) says what is left`);
  out(`    ${said.guard?.message ?? ''}`);

  // 6. The guard finishes it.
  section('Setting the guard to Undo');
  await show(sc.kubectl, ['patch', 'rolloutguard', STORE, '--type=merge', '-p', '{"spec":{"onStall":{"action":"Undo"}}}'], sc.ns);
  const done = await follow(sc, `all ${replicas} pods Ready on the original revision`, (s) => oneGeneration(s) === original);
  sc.view.leave();
  await finished(sc, done, { stuck, before, original });
  await showOutcome(sc);
}

/** 3. The StatefulSet on its good revision, then its Report guard, Healthy. Returns the revision's hash. */
async function deployHealthy(sc: Scene, good: string): Promise<string> {
  const { replicas, nodes } = cast(sc.opts.realNode);
  section(`StatefulSet ${STORE} (OrderedReady, ${replicas} replicas, image ${good}) and its RolloutGuard (Report)`);
  const manifest = statefulSetManifest({
    name: STORE,
    namespace: sc.ns,
    replicas,
    nodeAffinity: { key: 'kubernetes.io/hostname', values: nodes },
    ...(sc.opts.realNode ? { tolerations: [toleration(REAL_NODE_TAINT.key, REAL_NODE_TAINT.effect)] } : {}),
    container: {
      name: STORE,
      image: good,
      ...(sc.opts.realNode ? { command: ['sleep', '100000'] } : {}),
      requests: { cpu: '10m', memory: '16Mi' },
    },
  });
  await sc.kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  const healthy = await waitFor(async () => oneGeneration(await snapshot(sc)), {
    timeoutMs: 180_000,
    describe: `sts/${STORE} ${replicas}/${replicas} ready on one revision`,
  });
  out(`    sts/${STORE}: ${replicas}/${replicas} ready`);
  const spec = { ...TIMINGS, onStall: { action: 'Report' } };
  await sc.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify(rolloutGuardManifest({ name: STORE, namespace: sc.ns, kind: STATEFULSET_KIND, spec })),
  });
  const g = await waitFor(
    async () => {
      const s = await snapshot(sc);
      return s.guard?.state === 'Healthy' && s.guard.currentRevision ? s.guard : undefined;
    },
    { timeoutMs: 30_000, describe: `rolloutguard/${STORE} Healthy` },
  );
  out(
    `    rolloutguard/${STORE}: suspectAfterSeconds ${TIMINGS.suspectAfterSeconds}, progressDeadlineSeconds ${TIMINGS.progressDeadlineSeconds}, onStall.action Report`,
  );
  out(`    guard Healthy: ${g.message ?? ''}`);
  return healthy;
}

/** What the guard's finish must have been: one eviction, of the stuck pod, no undo, the others untouched. */
async function finished(
  sc: Scene,
  s: Snapshot,
  o: { stuck: PodIdentity; before: Map<string, PodIdentity>; original: string },
): Promise<void> {
  const g = s.guard;
  const evictions = g?.forcedRollback?.evictions ?? [];
  if (evictions.length !== 1 || evictions[0]?.pod !== o.stuck.name || evictions[0].result !== 'Evicted')
    throw new StoryFailed(`expected one eviction, of ${o.stuck.name}; the guard recorded ${JSON.stringify(evictions)}`);
  if (g?.lastUndo || (g?.undoneRevisions ?? []).length > 0)
    throw new StoryFailed(`the person had reverted, yet the guard made an undo of its own: ${JSON.stringify(g?.lastUndo)}`);
  const now = await pods(sc);
  for (const [name, was] of o.before) {
    if (name === o.stuck.name) continue;
    if (now.get(name)?.uid !== was.uid) throw new StoryFailed(`${name} was replaced, yet only ${o.stuck.name} should have been`);
  }
  if (now.get(o.stuck.name)?.uid === o.stuck.uid) throw new StoryFailed(`${o.stuck.name} is still the stuck pod`);
  await waitFor(async () => (await snapshot(sc)).events.some((e) => e.reason === 'PodEvicted'), {
    timeoutMs: 15_000,
    describe: 'the PodEvicted Event',
  });
  const at = s.events.find((e) => e.reason === 'PodEvicted')?.at;
  out(
    `\nThe guard evicted ${o.stuck.name}${at !== undefined ? ` at +${((at - sc.t0) / 1000).toFixed(1)} s` : ''}; the StatefulSet controller recreated it on the original revision, and all ${sc.ordinals.length} pods are Ready on it, ${((s.at - sc.t0) / 1000).toFixed(1)} s after the image change. The other pods kept their UIDs; the guard made no undo of its own (the person had reverted).`,
  );
  out(`\n$ kubectl rollout status statefulset/${STORE} -n ${sc.ns}`);
  const status = await sc.kubectl(['rollout', 'status', `statefulset/${STORE}`, '--timeout=30s'], { ns: sc.ns, allowFail: true });
  out(`${status.stdout}${status.stderr}`.trimEnd());
  if (status.code !== 0) throw new StoryFailed('kubectl rollout status did not complete after the guard finished the rollback');
}

/** 7. The real kubectl output and the Events. */
async function showOutcome(sc: Scene): Promise<void> {
  section('What kubectl shows now');
  await show(sc.kubectl, ['get', 'sts', STORE, '-o', 'wide'], sc.ns);
  await show(sc.kubectl, ['get', 'pods', '-o', 'wide'], sc.ns);
  await show(sc.kubectl, ['get', 'rg'], sc.ns);
  await show(sc.kubectl, ['describe', 'rg', STORE], sc.ns, { from: { re: /^Status:/, sed: '/^Status:/,$p' } });
  section('Events');
  await show(
    sc.kubectl,
    ['get', 'events', '--field-selector', `involvedObject.name=${STORE}`, '--sort-by=.metadata.creationTimestamp'],
    sc.ns,
  );
}

const snapshot = (sc: Scene): Promise<Snapshot> => readSnapshot(sc.client, sc.ns, STORE, sc.ordinals, () => Date.now(), 'StatefulSet');

/** The StatefulSet's pods by name. */
async function pods(sc: Scene): Promise<Map<string, PodIdentity>> {
  type Pod = {
    metadata: { name: string; uid: string; labels?: Record<string, string> };
    status?: { conditions?: Array<{ type: string; status: string }> };
  };
  const list = await sc.client.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${encodeURIComponent(sc.ns)}/pods`, {
    query: { labelSelector: `app=${STORE}` },
  });
  return new Map(
    list.items.map((p) => [
      p.metadata.name,
      {
        name: p.metadata.name,
        uid: p.metadata.uid,
        revision: p.metadata.labels?.['controller-revision-hash'] ?? '',
        ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      },
    ]),
  );
}

/**
 * Polls twice a second until `done` says the step is over, drawing the live view. On every tick the
 * operator must be alive; past the deadline (--timeout from this step's start) the story fails.
 */
async function follow(sc: Scene, what: string, done: (s: Snapshot) => boolean): Promise<Snapshot> {
  const deadline = Date.now() + sc.opts.timeoutMs;
  for (;;) {
    const s = await snapshot(sc);
    sc.view?.draw(s);
    if (sc.op.exited !== undefined) throw new StoryFailed(`the operator exited with ${sc.op.exited}\n${await sc.op.tail()}`);
    if (done(s)) return s;
    if (Date.now() > deadline)
      throw new StoryFailed(`timed out waiting for ${what}; guard state ${s.guard?.state ?? 'none'}: ${s.guard?.message ?? ''}`);
    // A polling interval, not a stand-in for a condition: every condition is re-read each tick.
    await new Promise((r) => setTimeout(r, 500));
  }
}
