/**
 * The dashboard's copy of `kubectl describe rolloutguard NAME`: the guard's metadata, spec and status in
 * kubectl's layout for a custom resource (each key in words, `progressDeadlineSeconds` as `Progress
 * Deadline Seconds`, values aligned per level), then its Events as kubectl's table. Plain text, no links:
 * the page shows it in a `<pre>`, so a person can copy it into an issue. Pure.
 */
import type { SlimGuard } from '../api/objects.js';
import { API_VERSION, GUARD_KIND } from '../api/names.js';
import type { TimelineEvent } from './dashboardTimeline.js';
import { humanAge } from './listRender.js';

/** `progressDeadlineSeconds` → `Progress Deadline Seconds`, as kubectl's describe words a field. */
export function words(key: string): string {
  const spaced = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The lines of `value` under a key, at `indent` spaces, in kubectl's layout. */
function block(value: Record<string, unknown>, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const keys = Object.keys(value).filter((k) => value[k] !== undefined);
  const width = Math.max(0, ...keys.filter((k) => !isMap(value[k]) && !Array.isArray(value[k])).map((k) => words(k).length + 1));
  const out: string[] = [];
  for (const k of keys) {
    const v = value[k];
    if (isMap(v)) {
      out.push(`${pad}${words(k)}:`, ...block(v, indent + 2));
    } else if (Array.isArray(v)) {
      out.push(`${pad}${words(k)}:`);
      for (const item of v) out.push(...(isMap(item) ? block(item, indent + 2) : [`${pad}  ${String(item)}`]));
    } else {
      out.push(`${pad}${`${words(k)}:`.padEnd(width + 2)}${String(v)}`);
    }
  }
  return out;
}

/** kubectl's `Labels:` value: one `k=v` a line, aligned, or `<none>`. */
function labelLines(title: string, m: Record<string, string> | undefined): string[] {
  const entries = Object.entries(m ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return [`${title.padEnd(14)}<none>`];
  return entries.map(([k, v], i) => `${(i === 0 ? title : '').padEnd(14)}${k}=${v}`);
}

/** kubectl's Events table of `events`, newest last, ages counted from `now`. */
export function eventsTable(events: ReadonlyArray<Readonly<TimelineEvent>>, now: number): string[] {
  if (events.length === 0) return ['Events:       <none>'];
  const rows = [...events]
    .sort((a, b) => (Date.parse(a.at) || 0) - (Date.parse(b.at) || 0))
    .map((e) => {
      const age = Number.isNaN(Date.parse(e.at)) ? '<unknown>' : humanAge(now - Date.parse(e.at));
      return [e.type, e.reason, e.count > 1 ? `${age} (x${e.count})` : age, e.source, e.message];
    });
  const all = [['Type', 'Reason', 'Age', 'From', 'Message'], ['----', '------', '----', '----', '-------'], ...rows];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...all.map((r) => r[i]!.length)));
  return ['Events:', ...all.map((r) => `  ${r.map((c, i) => (i < 4 ? c.padEnd(widths[i]! + 2) : c)).join('')}`.trimEnd())];
}

/** The guard as `kubectl describe rolloutguard` prints it, with `events` (the Events about the guard). */
export function describeGuard(g: Readonly<SlimGuard>, events: ReadonlyArray<Readonly<TimelineEvent>>, now: number): string {
  const m = g.metadata;
  const meta: Record<string, unknown> = {
    creationTimestamp: m.creationTimestamp,
    generation: m.generation,
    resourceVersion: m.resourceVersion,
    uid: m.uid,
  };
  const owners = m.ownerReferences ?? [];
  if (owners.length > 0) meta.ownerReferences = owners.map((o) => ({ ...o }));
  const lines = [
    `${'Name:'.padEnd(14)}${m.name}`,
    `${'Namespace:'.padEnd(14)}${m.namespace ?? ''}`,
    ...labelLines('Labels:', m.labels),
    ...labelLines('Annotations:', m.annotations),
    `${'API Version:'.padEnd(14)}${API_VERSION}`,
    `${'Kind:'.padEnd(14)}${GUARD_KIND}`,
    'Metadata:',
    ...block(meta, 2),
    'Spec:',
    ...block(g.spec, 2),
    ...(g.status ? ['Status:', ...block(g.status as Record<string, unknown>, 2)] : []),
    ...eventsTable(events, now),
  ];
  return lines.join('\n');
}
