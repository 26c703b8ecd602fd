/**
 * RFC 7386 JSON merge patch between two JSON documents: what changed, with removed keys set to null.
 * Arrays are replaced whole (merge patch has no list semantics), which is also what makes the
 * conditions list safe to send: the server stores exactly the list we computed.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep equality of JSON values, ignoring object key order. The API server returns a custom resource's
 * keys sorted (Go's encoding/json), while decide builds them in code order: comparing serialisations
 * made every list of objects whose keys are not alphabetical (blockedNodes, emptyNodes) look changed,
 * so every pass over a blocked rollout sent a PATCH that the server then found to change nothing.
 * Keys whose value is `undefined` count as absent, as in JSON.
 */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => b[k] !== undefined && equal(a[k], b[k]));
}

/**
 * Returns the merge patch turning `from` into `to`, or undefined when they are equal. Keys whose value
 * is `undefined` in `to` count as absent.
 */
export function mergePatchDiff(from: unknown, to: unknown): Json | undefined {
  if (!isObject(from) || !isObject(to)) {
    return equal(from, to) ? undefined : ((to ?? null) as Json);
  }
  const patch: Record<string, Json> = {};
  for (const k of Object.keys(from)) {
    if (from[k] !== undefined && to[k] === undefined) patch[k] = null;
  }
  for (const k of Object.keys(to)) {
    if (to[k] === undefined) continue;
    if (from[k] === undefined) {
      patch[k] = to[k] as Json;
      continue;
    }
    const d = mergePatchDiff(from[k], to[k]);
    if (d !== undefined) patch[k] = d;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
