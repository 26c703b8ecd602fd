/**
 * The cluster's etcd: one member on loopback, plain HTTP, data in the cluster directory.
 *
 * @module
 */
import { httpGet } from './http.js';
import { paths } from './paths.js';
import type { Ports } from './ports.js';
import type { ComponentSpec } from './processes.js';
import type { State } from './state.js';

/** The URL etcd serves its clients (the API server) on. */
export function etcdClientUrl(ports: Ports): string {
  return `http://127.0.0.1:${ports.etcdClient}`;
}

/** etcd's command line and readiness check. */
export function etcdSpec(state: State): ComponentSpec {
  const p = paths();
  const etcdUrl = etcdClientUrl(state.ports);
  const peerUrl = `http://127.0.0.1:${state.ports.etcdPeer}`;
  return {
    name: 'etcd',
    args: [
      '--name=node0',
      `--data-dir=${p.etcdData}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=node0=${peerUrl}`,
      '--auto-compaction-retention=1',
      '--log-level=warn',
      // Throwaway data: durability buys nothing and fsync dominates on slow CI disks.
      '--unsafe-no-fsync',
    ],
    ready: async () => (await httpGet(`${etcdUrl}/health`)).body.includes('"health":"true"'),
  };
}
