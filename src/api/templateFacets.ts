/**
 * The facets of a revision's pod template that scheduling and admission failures are about, kept
 * instead of the template (k8s/slim.ts computes them; domain/compare.ts compares them).
 */
export interface TemplateFacets {
  /** `port/protocol` of every hostPort, sorted. */
  hostPorts: string[];
  /** What the scheduler counts for the pod, per resource (cpu in cores, memory in bytes). */
  requests: Record<string, number>;
  serviceAccountName?: string;
  priorityClassName?: string;
  /** A digest of the pod's and containers' securityContext, host namespaces and volume types. */
  security?: string;
  /**
   * A digest of where the pod may run: its nodeSelector, node affinity and tolerations. Two revisions
   * with the same placement are refused by the same nodes for placement's sake (a tainted node, a
   * volume pinned to a node that no longer takes the pod).
   */
  placement?: string;
}
