/**
 * Shared by test/e2e/security.test.ts (the kustomize installs) and test/e2e/chart.test.ts (the Helm
 * chart): copying rendered RBAC objects into the cluster under names no concurrent suite can collide
 * with, and asking the API server's own authorizer (`kubectl auth can-i`) what the operator's
 * ServiceAccount may do. Both suites must ask the same questions of every install, so the question lists
 * live here once rather than being kept in step by hand.
 */
import assert from 'node:assert/strict';
import { kubectl } from './cluster.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML */
/** A rendered manifest object. */
export type Obj = Record<string, any>;

/** The kinds that make up an install's RBAC: what {@link relocateRbac} copies. */
export const RBAC_KINDS: ReadonlySet<string> = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
/** The namespace the kustomize installs hard-code (and the chart is rendered into for comparisons). */
export const INSTALL_NS = 'rollout-guard-system';

/**
 * Where a suite moves the namespaced parts of a copy. The suites differ here (security.test.ts moves
 * objects between namespaces, chart.test.ts renders into unique namespaces and only checks), so each
 * passes its own rules; the renaming that keeps cluster-scoped copies apart is common.
 */
export interface RbacPlacement {
  /** The namespace a namespaced object goes to (called before any renaming, with the object as rendered but labelled). */
  namespace(o: Obj): string;
  /** Checks, and may move, one subject of a binding (called after the cluster-scoped renaming). */
  subject(s: Obj, binding: Obj): void;
}

/**
 * The RBAC objects of a rendering, copied so that they cannot collide with the real install or with other
 * suites running against the same cluster: each carries `label: suffix` for cleanup, cluster-scoped names
 * and ClusterRole references get `-suffix`, and `place` decides namespaces and checks subjects.
 */
export function relocateRbac(docs: readonly Obj[], label: string, suffix: string, place: RbacPlacement): Obj[] {
  return docs
    .filter((d) => RBAC_KINDS.has(d.kind as string))
    .map((d) => {
      const o = structuredClone(d);
      o.metadata.labels = { ...o.metadata.labels, [label]: suffix };
      if (o.metadata.namespace !== undefined) o.metadata.namespace = place.namespace(o);
      if ((o.kind as string).startsWith('Cluster')) o.metadata.name = `${o.metadata.name}-${suffix}`;
      if (o.roleRef?.kind === 'ClusterRole') o.roleRef.name = `${o.roleRef.name}-${suffix}`;
      for (const s of (o.subjects ?? []) as Obj[]) place.subject(s, o);
      return o;
    });
}

/**
 * `kubectl auth can-i` as `sa` (e.g. system:serviceaccount:<ns>:rollout-guard): true for "yes", false for
 * "no". The API server's own authorizer answers, so the test proves what RBAC grants rather than what we
 * think the rules say; any other answer fails.
 */
export async function canI(sa: string, args: readonly string[]): Promise<boolean> {
  const res = await kubectl(['auth', 'can-i', ...args, `--as=${sa}`], { allowFail: true });
  // A resource the API does not serve (rollouts.argoproj.io without Argo Rollouts installed) is not
  // resolved by kubectl, which then asks about a core resource of that whole name: ask the authorizer
  // about the group and resource as written instead.
  if (/doesn't have a resource type '[^']+' in group/.test(res.stderr)) return accessReview(sa, args);
  const answer = res.stdout.trim();
  assert.ok(answer === 'yes' || answer === 'no', `can-i ${args.join(' ')}: ${answer} ${res.stderr}`);
  return answer === 'yes';
}

/** A SelfSubjectAccessReview as `sa` of `can-i`'s arguments: verb, resource[.group], -n NS, -A, --subresource=. */
async function accessReview(sa: string, args: readonly string[]): Promise<boolean> {
  const [verb, named, ...rest] = args;
  const dot = named!.indexOf('.');
  const attributes: Record<string, string> = {
    verb: verb!,
    resource: dot < 0 ? named! : named!.slice(0, dot),
    group: dot < 0 ? '' : named!.slice(dot + 1),
  };
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '-n') attributes.namespace = rest[++i]!;
    else if (rest[i]!.startsWith('--subresource=')) attributes.subresource = rest[i]!.slice('--subresource='.length);
  }
  const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attributes } };
  // Without validation, which would read the CRDs first, as `sa` may not.
  const res = await kubectl(['create', '-f', '-', '-o', 'json', '--validate=false', `--as=${sa}`], { input: JSON.stringify(review) });
  return (JSON.parse(res.stdout) as { status?: { allowed?: boolean } }).status?.allowed === true;
}

/**
 * Asks every question (four kubectl processes at a time, to keep long lists quick on a small machine)
 * and fails naming each answer that is not `expected`, all at once rather than at the first.
 */
export async function expectCan(sa: string, questions: ReadonlyArray<readonly string[]>, expected: boolean): Promise<void> {
  const wrong: string[] = [];
  const queue = [...questions];
  const ask = async (): Promise<void> => {
    for (let q = queue.shift(); q; q = queue.shift()) if ((await canI(sa, q)) !== expected) wrong.push(q.join(' '));
  };
  await Promise.all([ask(), ask(), ask(), ask()]);
  assert.deepEqual(wrong.sort(), [], `${sa} ${expected ? 'is refused' : 'is allowed'}: ${wrong.join('; ')}`);
}

/** The same questions asked in namespace `ns` instead of `default` (for namespaced installs' watched namespaces). */
export function inNamespace(questions: ReadonlyArray<readonly string[]>, ns: string): string[][] {
  return questions.map((q) => q.map((a, i) => (a === 'default' && q[i - 1] === '-n' ? ns : a)));
}

/** What the operator needs in every install that watches all namespaces, as `kubectl auth can-i` arguments. `-A`: in every namespace. */
export const ALLOWED: ReadonlyArray<readonly string[]> = [
  ['get', 'daemonsets.apps', '-A'],
  ['list', 'daemonsets.apps', '-A'],
  ['watch', 'daemonsets.apps', '-A'],
  ['list', 'pods', '-A'],
  ['watch', 'pods', '-A'],
  ['list', 'nodes'],
  ['watch', 'nodes'],
  ['list', 'controllerrevisions.apps', '-A'],
  ['watch', 'controllerrevisions.apps', '-A'],
  ['get', 'controllerrevisions.apps', '-n', 'default'],
  ['list', 'rolloutguards.rolloutguard.dev', '-A'],
  ['watch', 'rolloutguards.rolloutguard.dev', '-A'],
  ['list', 'events', '-A'],
  ['watch', 'events', '-A'],
  ['list', 'persistentvolumeclaims', '-A'],
  ['watch', 'persistentvolumeclaims', '-A'],
  ['patch', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', 'default'],
  ['create', 'events.events.k8s.io', '-n', 'default'],
];

/** What only the RolloutGuardPolicy controller needs (the rollout-guard-policies binding). */
export const POLICY_ALLOWED: ReadonlyArray<readonly string[]> = [
  ['list', 'rolloutguardpolicies.rolloutguard.dev'],
  ['watch', 'rolloutguardpolicies.rolloutguard.dev'],
  ['patch', 'rolloutguardpolicies.rolloutguard.dev', '--subresource=status'],
  ['list', 'namespaces'],
  ['watch', 'namespaces'],
  // Generated guards of RolloutGuardPolicies.
  ['create', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['patch', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['delete', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
];

/**
 * The undo (rollout-guard-undo binding): the patch, pod creation for the server-side dry runs
 * (dryRun=All) that compare admission of the previous revision before it, a StatefulSet's forced
 * rollback (evictions, never deletes), and the list of Argo Rollouts read before a Deployment's undo.
 */
export const UNDO_ALLOWED: ReadonlyArray<readonly string[]> = [
  ['patch', 'daemonsets.apps', '-n', 'default'],
  ['patch', 'statefulsets.apps', '-n', 'default'],
  ['patch', 'deployments.apps', '-n', 'default'],
  ['create', 'pods', '-n', 'default'],
  ['create', 'pods', '--subresource=eviction', '-n', 'default'],
  ['list', 'rollouts.argoproj.io', '-n', 'default'],
];

/** What it must never be able to do, in any install. */
export const DENIED: ReadonlyArray<readonly string[]> = [
  ['*', '*', '-A'],
  ['*', 'daemonsets.apps', '-n', 'default'],
  ['get', '*', '-A'],
  ['get', 'secrets', '-n', 'default'],
  ['list', 'secrets', '-A'],
  ['watch', 'secrets', '-A'],
  ['get', 'configmaps', '-n', 'default'],
  ['list', 'configmaps', '-A'],
  ['update', 'pods', '-n', 'default'],
  ['delete', 'pods', '-n', 'default'],
  ['deletecollection', 'pods', '-n', 'default'],
  ['create', 'pods', '--subresource=exec', '-n', 'default'],
  ['create', 'daemonsets.apps', '-n', 'default'],
  ['update', 'daemonsets.apps', '-n', 'default'],
  ['delete', 'daemonsets.apps', '-n', 'default'],
  ['patch', 'daemonsets.apps', '--subresource=status', '-n', 'default'],
  ['create', 'controllerrevisions.apps', '-n', 'default'],
  ['delete', 'controllerrevisions.apps', '-n', 'default'],
  ['patch', 'nodes'],
  ['update', 'nodes'],
  ['delete', 'nodes'],
  ['patch', 'namespaces'],
  ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
  ['create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'default'],
  ['create', 'clusterroles.rbac.authorization.k8s.io'],
  ['escalate', 'clusterroles.rbac.authorization.k8s.io'],
  ['bind', 'clusterroles.rbac.authorization.k8s.io'],
  ['impersonate', 'serviceaccounts', '-A'],
  ['impersonate', 'users'],
  ['create', 'serviceaccounts', '--subresource=token', '-n', 'default'],
  // Status is written by merge patch only; spec edits of guards by patch only.
  ['update', 'rolloutguards.rolloutguard.dev', '--subresource=status', '-n', 'default'],
  ['update', 'rolloutguards.rolloutguard.dev', '-n', 'default'],
  ['create', 'rolloutguardpolicies.rolloutguard.dev'],
  ['delete', 'rolloutguardpolicies.rolloutguard.dev'],
  // Events go through events.k8s.io only, and are only ever created.
  ['create', 'events', '-n', 'default'],
  ['patch', 'events', '-n', 'default'],
  ['patch', 'events.events.k8s.io', '-n', 'default'],
  ['patch', 'events.events.k8s.io', '-A'],
  ['update', 'events.events.k8s.io', '-n', 'default'],
  ['delete', 'events.events.k8s.io', '-n', 'default'],
  // Leader election only in its own namespace.
  ['update', 'leases.coordination.k8s.io', '-n', 'default'],
  ['update', 'leases.coordination.k8s.io', '-n', 'kube-system'],
  ['create', 'leases.coordination.k8s.io', '-n', 'kube-node-lease'],
  ['update', 'leases.coordination.k8s.io', '-n', INSTALL_NS],
  ['delete', 'leases.coordination.k8s.io', '-A'],
];
