/**
 * Where a cluster keeps its files: the repository root, and the cluster directory under it (`.cluster`,
 * or `$RG_CLUSTER_DIR` for a private cluster beside the shared one) with its lock, kubeconfig, state,
 * PKI, data, logs and pid files.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Env var naming the cluster directory (relative to the repository root, or absolute); default `.cluster`. */
export const CLUSTER_DIR_ENV = 'RG_CLUSTER_DIR';

/** Locations of the repository and of the cluster state under it (`$RG_CLUSTER_DIR`, default `.cluster`). */
export function paths() {
  const root = repoRoot();
  const dir = path.resolve(root, process.env[CLUSTER_DIR_ENV] || '.cluster');
  return {
    root,
    dir,
    kubeconfig: path.join(dir, 'kubeconfig'),
    state: path.join(dir, 'state.json'),
    pki: path.join(dir, 'pki'),
    etcdData: path.join(dir, 'etcd'),
    logs: path.join(dir, 'logs'),
    pids: path.join(dir, 'pids'),
    kwokHome: path.join(dir, 'kwok-home'),
    lock: path.join(dir, 'up.lock'),
    auditPolicy: path.join(dir, 'audit-policy.yaml'),
    auditLog: path.join(dir, 'logs', 'audit.log'),
    buildScript: path.join(root, 'cluster', 'build.sh'),
    stages: path.join(root, 'cluster', 'stages.yaml'),
    kwokConfig: path.join(dir, 'kwok-config.yaml'),
  };
}

/** The repository root: the nearest directory above this module with a package.json. */
export const ROOT = repoRoot();

function repoRoot(): string {
  // Compiled to dist/cluster/ and run from there, so find the root instead of assuming a depth.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
