/**
 * RFC 7386 JSON merge patch between two JSON documents: what changed, with removed keys set to null.
 * Arrays are replaced whole (merge patch has no list semantics), which is also what makes the
 * conditions list safe to send: the server stores exactly the list we computed.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
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
