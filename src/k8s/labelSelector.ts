/**
 * A metav1.LabelSelector: as the slim caches keep it, and in the string form list and watch take
 * (`labelSelector=`), as `metav1.LabelSelectorAsSelector` writes it: `k=v` for matchLabels,
 * `k in (a,b)`, `k notin (a,b)`, `k` and `!k` for matchExpressions.
 */

import type { LabelSelector, LabelSelectorRequirement } from '../api/objects.js';

/**
 * The selector of a raw object read from JSON (a workload's `spec.selector`), as a slim object keeps it:
 * matchLabels and matchExpressions copied, each only when present (matchExpressions only as a list), so
 * the cached object shares nothing with the raw one.
 */
export function slimLabelSelector(raw: unknown): LabelSelector {
  const sel = (raw ?? {}) as { matchLabels?: Record<string, string>; matchExpressions?: unknown };
  return {
    ...(sel.matchLabels ? { matchLabels: { ...sel.matchLabels } } : {}),
    ...(Array.isArray(sel.matchExpressions)
      ? { matchExpressions: structuredClone(sel.matchExpressions as LabelSelectorRequirement[]) }
      : {}),
  };
}

/**
 * The selector's string form, with `extra` requirements appended. Keys are sorted, as the API server
 * sorts them, so the same selector always gives the same string. An operator this code does not know
 * throws: a selector that silently matched more or less would be worse than none.
 */
export function selectorString(sel: LabelSelector | undefined, extra: readonly string[] = []): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) parts.push(`${k}=${v}`);
  for (const r of [...(sel?.matchExpressions ?? [])].sort((a, b) => a.key.localeCompare(b.key))) {
    const values = [...(r.values ?? [])].sort().join(',');
    switch (r.operator) {
      case 'In':
        parts.push(`${r.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${r.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(r.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${r.key}`);
        break;
      default:
        throw new Error(`label selector operator ${r.operator} is not supported`);
    }
  }
  return [...parts, ...extra].join(',');
}
