/**
 * kwok, which plays the kubelets of the fake nodes: the main instance (nodes annotated
 * `kwok.x-k8s.io/node=fake`), the extra per-pool instances a test can freeze, and kwok's configuration
 * file when its pod workers are raised.
 *
 * @module
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { nodeLeaseTimings } from './controllers.js';
import { httpGet } from './http.js';
import { KWOK_NODE_ANNOTATION } from './nodes.js';
import { paths } from './paths.js';
import { freePort } from './ports.js';
import type { ComponentSpec, ProcessName } from './processes.js';
import type { State } from './state.js';

// Pod IPs come from a range distinct from Services so a wrong IP in a test failure is recognisable.
const POD_CIDR = '10.244.0.0/16';
const NODE_IP = '10.0.0.1';

/**
 * kwok's configuration file for {@link KWOK_PARALLELISM_ENV}: a second `--config` beside the stages.
 * kwok v0.8.0 applies no defaults to a KwokConfiguration it reads from a file (a worker count left out
 * is 0, and kwok refuses to start), so every option kwok defaults is written out with its default.
 */
export function kwokConfigYaml(podWorkers: number): string {
  // Node Leases are renewed by their own workers (default 4): 5,000 kubelets renew every 10 s, 500
  // requests a second, and a renewal four workers leave late past the grace period turns a node
  // Unknown, a node fault no operator could be blamed for. Raised with the pod workers.
  const leaseWorkers = Math.max(4, Math.round(podWorkers / 2));
  return toYaml({
    apiVersion: 'config.kwok.x-k8s.io/v1alpha1',
    kind: 'KwokConfiguration',
    options: {
      podPlayStageParallelism: podWorkers,
      nodePlayStageParallelism: 4,
      nodeLeaseParallelism: leaseWorkers,
      podsOnNodeSyncParallelism: 1,
      manageAllNodes: false,
      enableDebuggingHandlers: true,
      enableContentionProfiling: false,
      enableProfilingHandler: true,
      enablePodsOnNodeSyncListPager: true,
      enablePodsOnNodeSyncStreamWatch: false,
    },
  });
}

/**
 * A kwok process managing the nodes annotated `kwok.x-k8s.io/node=<selectorValue>`: the main one
 * (`fake`) or a kwok instance. All share the stages file and the pod CIDR/node IP flags, so a pool's
 * pods behave the same whichever kwok drives them.
 */
export function kwokSpec(state: State, name: ProcessName, selectorValue: string, port: number, home: string): ComponentSpec {
  const p = paths();
  return {
    name,
    args: [
      `--kubeconfig=${p.kubeconfig}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${selectorValue}`,
      `--config=${p.stages}`,
      ...(state.kwokParallelism ? [`--config=${p.kwokConfig}`] : []),
      `--cidr=${POD_CIDR}`,
      `--node-ip=${NODE_IP}`,
      `--server-address=127.0.0.1:${port}`,
      // The node-lifecycle controller (always running: it lifts TaintNodesByCondition's taint) counts a
      // node alive while its Lease is renewed. Without the flag kwok keeps no Lease, and its status
      // heartbeat (every 10 minutes) is far past the 50 s grace period: every node would turn Unknown.
      `--node-lease-duration-seconds=${nodeLeaseTimings(state).leaseSeconds}`,
    ],
    // kwok also loads ~/.kwok/kwok.yaml when it exists; a private HOME keeps a developer's own
    // stages from silently changing pod behaviour in tests.
    env: { ...process.env, HOME: home },
    ready: async () => (await httpGet(`http://127.0.0.1:${port}/healthz`)).status === 200,
  };
}

/**
 * The spec of kwok instance `kwok-<pool>`: its own HOME (under the cluster directory) and a port the
 * kernel picks, since any number of instances may run beside the fixed-port components.
 */
export async function kwokInstanceSpec(state: State, name: ProcessName): Promise<ComponentSpec> {
  const pool = name.slice('kwok-'.length);
  const home = path.join(paths().dir, `${name}-home`);
  await mkdir(home, { recursive: true });
  return kwokSpec(state, name, pool, await freePort(), home);
}
