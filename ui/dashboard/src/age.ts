// kubectl's way of saying an age (as `rollout-guard list` does): 45s, 3m12s, 2h, 5d.
export function age(since: string, now: number): string {
  const t = Date.parse(since);
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (h < 3) return `${m}m`;
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (d < 2) return `${h}h`;
  return `${d}d`;
}
