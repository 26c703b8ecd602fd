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

/** kubectl's overrides of what the kubeconfig's current context says (`--context`, `--cluster`, `--user`). */
export interface KubeConfigOverrides {
  context?: string;
  cluster?: string;
  user?: string;
}

/**
 * Loads the kubeconfig (see the module doc) and applies kubectl's overrides: `--context` picks the
 * context, `--cluster` and `--user` replace its cluster and user. A name the kubeconfig does not have is
 * a {@link KubeConfigError} naming the ones it has.
 */
export function loadKubeConfig(
  path?: string,
  env: NodeJS.ProcessEnv = process.env,
  exists: (p: string) => boolean = existsSync,
  overrides: KubeConfigOverrides = {},
): KubeConfig {
  const kc = loadFiles(path, env, exists);
  if (overrides.context || overrides.cluster || overrides.user) applyOverrides(kc, overrides);
  return kc;
}

function applyOverrides(kc: KubeConfig, o: KubeConfigOverrides): void {
  const names = (xs: ReadonlyArray<{ name: string }>): string => xs.map((x) => x.name).join(', ') || 'none';
  const name = o.context ?? kc.getCurrentContext();
  if (!name) throw new KubeConfigError(`the kubeconfig sets no current-context: pass --context (its contexts: ${names(kc.getContexts())})`);
  const ctx = kc.getContextObject(name);
  if (!ctx) throw new KubeConfigError(`context "${name}" is not in the kubeconfig (its contexts: ${names(kc.getContexts())})`);
  if (o.cluster && !kc.getCluster(o.cluster))
    throw new KubeConfigError(`cluster "${o.cluster}" is not in the kubeconfig (its clusters: ${names(kc.getClusters())})`);
  if (o.user && !kc.getUser(o.user))
    throw new KubeConfigError(`user "${o.user}" is not in the kubeconfig (its users: ${names(kc.getUsers())})`);
  const chosen = { ...ctx, ...(o.cluster ? { cluster: o.cluster } : {}), ...(o.user ? { user: o.user } : {}) };
  kc.loadFromOptions({
    clusters: kc.getClusters(),
    users: kc.getUsers(),
    contexts: kc.getContexts().map((c) => (c.name === name ? chosen : c)),
    currentContext: name,
  });
}

/**
 * A list of files (`a:b`) is merged as kubectl merges $KUBECONFIG: files that do not exist are skipped,
 * the first file to name a cluster, user or context wins it, and the first current-context wins.
 */
function mergeFiles(files: readonly string[]): KubeConfig {
  const parts = files.map((f) => {
    const one = new KubeConfig();
    one.loadFromFile(f);
    return one;
  });
  const firstByName = <T extends { name: string }>(pick: (k: KubeConfig) => readonly T[]): T[] => {
    const seen = new Map<string, T>();
    for (const k of parts) for (const x of pick(k)) if (!seen.has(x.name)) seen.set(x.name, x);
    return [...seen.values()];
  };
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: firstByName((k) => k.getClusters()),
    users: firstByName((k) => k.getUsers()),
    contexts: firstByName((k) => k.getContexts()),
    currentContext: parts.map((k) => k.getCurrentContext()).find((c) => c) ?? '',
  });
  return kc;
}

function loadFiles(path: string | undefined, env: NodeJS.ProcessEnv, exists: (p: string) => boolean): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    const files = path.split(delimiter).filter(Boolean);
    const present = files.filter((f) => exists(f));
    if (present.length === 0) throw new KubeConfigError(`kubeconfig ${path} does not exist`);
    if (present.length === 1) {
      kc.loadFromFile(present[0]!);
      return kc;
    }
    return mergeFiles(present);
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

/** Who a request acts as, as kubectl's `--as` and `--as-group` (the API server's impersonation headers). */
export interface Impersonation {
  as?: string;
  asGroups?: string[];
}

/** How a one-shot command reaches the cluster: kubectl's connection flags. */
export interface Connection extends KubeConfigOverrides, Impersonation {
  kubeconfig?: string;
}

/**
 * The kubeconfig of a CLI command, as kubectl finds it: `--kubeconfig` (a file or a list), else
 * $KUBECONFIG (kubectl passes its environment to a plugin unchanged), then the usual places; with the
 * overrides applied. Also the namespace kubectl would use without `-n`: the context's, else `default`.
 */
export function loadConnection(c: Connection, env: NodeJS.ProcessEnv = process.env): { kc: KubeConfig; namespace: string } {
  const kc = loadKubeConfig(c.kubeconfig ?? (env.KUBECONFIG || undefined), env, existsSync, c);
  return { kc, namespace: kc.getContextObject(kc.getCurrentContext())?.namespace || 'default' };
}
