/**
 * Loads the API server connection: an explicit kubeconfig file; else, in a pod, the service account;
 * else $KUBECONFIG, then ~/.kube/config — client-node's order, except that finding none is an error.
 * client-node would fall back to http://localhost:8080, and the operator would then retry a server
 * that is not there, forever, saying only "connection refused".
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** The service account token a pod is given; with KUBERNETES_SERVICE_HOST, the sign of running in a cluster. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** No usable kubeconfig: the message says where it looked and what to do. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

/** True when running in a pod with a service account (and no kubeconfig was named). */
export function inCluster(env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST) && exists(SERVICE_ACCOUNT_TOKEN);
}

export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    const files = path.split(delimiter).filter(Boolean);
    const missing = files.filter((f) => !exists(f));
    if (files.length === 0 || missing.length === files.length) throw new KubeConfigError(`kubeconfig ${path} does not exist`);
    if (files.length === 1) kc.loadFromFile(files[0]!);
    else kc.loadFromDefault({}, false); // a $KUBECONFIG list: client-node merges the files that exist
    return kc;
  }
  if (inCluster(env, exists)) {
    kc.loadFromCluster();
    return kc;
  }
  const fallback = join(env.HOME ?? homedir(), '.kube', 'config');
  if (!exists(fallback)) {
    throw new KubeConfigError(
      `no kubeconfig: $KUBECONFIG is not set and ${fallback} does not exist, and this is not a pod with a service account. ` +
        'Pass --kubeconfig PATH or set KUBECONFIG (e.g. export KUBECONFIG=$PWD/.cluster/kubeconfig for the local control plane).',
    );
  }
  kc.loadFromFile(fallback);
  return kc;
}
