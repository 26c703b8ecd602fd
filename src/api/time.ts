/** Time in the API's own formats. */

/**
 * Formats epoch ms as a Kubernetes MicroTime (`2026-11-29T16:32:51.123456Z`): RFC 3339 with exactly six
 * fractional digits, the only form the API server's MicroTime parser accepts. Sub-millisecond parts of
 * `epochMs` (a monotonic-derived time) fill the last three digits.
 */
export function microTime(epochMs: number): string {
  const whole = Math.floor(epochMs);
  const micros = Math.floor((epochMs - whole) * 1000);
  return new Date(whole).toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}${String(micros).padStart(3, '0')}Z`);
}
