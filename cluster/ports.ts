/**
 * The loopback ports of a cluster: the shared cluster's defaults, the `RG_*_PORT` overrides a private
 * cluster runs on, and free ports for listeners started beside the control plane.
 *
 * @module
 */
import * as net from 'node:net';

/** Loopback ports used by the control plane. */
export interface Ports {
  apiserver: number;
  etcdClient: number;
  etcdPeer: number;
  controllerManager: number;
  scheduler: number;
  kwok: number;
  /** The real node's kubelet API (`--real-node`), on loopback. */
  kubelet: number;
  /** The real node's kubelet /healthz. */
  kubeletHealthz: number;
}

/** The shared cluster's ports; a private cluster offsets each of them. */
export const DEFAULT_PORTS: Readonly<Ports> = {
  apiserver: 6443,
  etcdClient: 2379,
  etcdPeer: 2380,
  controllerManager: 10257,
  scheduler: 10259,
  kwok: 10247,
  kubelet: 10350,
  kubeletHealthz: 10348,
};

/** The environment variable that overrides each port. */
export const PORT_ENV: Readonly<Record<keyof Ports, string>> = {
  apiserver: 'RG_APISERVER_PORT',
  etcdClient: 'RG_ETCD_CLIENT_PORT',
  etcdPeer: 'RG_ETCD_PEER_PORT',
  controllerManager: 'RG_KCM_PORT',
  scheduler: 'RG_SCHEDULER_PORT',
  kwok: 'RG_KWOK_PORT',
  kubelet: 'RG_KUBELET_PORT',
  kubeletHealthz: 'RG_KUBELET_HEALTHZ_PORT',
};

/** Reads port overrides (`RG_APISERVER_PORT`, `RG_ETCD_CLIENT_PORT`, …) on top of the defaults. */
export function portsFromEnv(env: NodeJS.ProcessEnv = process.env): Ports {
  const ports = { ...DEFAULT_PORTS };
  for (const key of Object.keys(PORT_ENV) as Array<keyof Ports>) {
    const raw = env[PORT_ENV[key]];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${PORT_ENV[key]}=${raw} is not a port number`);
    ports[key] = n;
  }
  return ports;
}

/** Throws, naming the port's env var, when one of `ports` is already taken on 127.0.0.1. */
export async function assertPortsFree(ports: Ports): Promise<void> {
  for (const key of Object.keys(ports) as Array<keyof Ports>) {
    const port = ports[key];
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (!free) throw new Error(`port ${port} (${key}) on 127.0.0.1 is in use; set ${PORT_ENV[key]} to another port`);
  }
}

/**
 * A loopback port that was free a moment ago, picked by the kernel from its ephemeral range. Exported for
 * the suites and bench modes that start their own listeners (Prometheus, kube-state-metrics) beside the
 * control plane, so that there is one way to pick a port.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
