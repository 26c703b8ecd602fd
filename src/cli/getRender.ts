/**
 * How `rollout-guard get` shows its view: as text (a header, the node table, the reasons; ANSI colours on
 * a terminal), as JSON or YAML, and how a render is framed under --watch.
 */
import type { GenerationStatus, RevisionRef, TargetKind } from '../api/types.js';
import { fmtRev, units, unitWord } from '../domain/messages.js';
import { KINDS } from '../api/kinds.js';
import type { GetView, GuardSummary, NodeRow } from './getView.js';
import { emitYaml } from './yaml.js';

const ANSI = { red: 31, green: 32, yellow: 33, blue: 34, cyan: 36, bold: 1, dim: 2 } as const;
type Paint = (text: string, ...styles: Array<keyof typeof ANSI>) => string;

const STATE_COLOUR: Record<string, keyof typeof ANSI> = {
  Healthy: 'green',
  RolledBack: 'green',
  Progressing: 'cyan',
  RollingBack: 'cyan',
  Waiting: 'cyan',
  Suspect: 'yellow',
  Suspended: 'yellow',
  Conflict: 'yellow',
  Stalled: 'red',
  Failed: 'red',
};

/** "3 (5d8f9c7b4)", or "? (5d8f9c7b4)" when the revision number is not known. */
function revCell(r: { revision?: number; hash?: string }): string {
  if (r.hash === undefined) return '-';
  return `${r.revision ?? '?'} (${r.hash})`;
}

function revisionLines(gens: readonly GenerationStatus[], current: RevisionRef | undefined, paint: Paint, kind: TargetKind): string[] {
  if (gens.length === 0) return [`Revisions:    none on any ${unitWord(kind, false)}`];
  const cells = gens.map(
    (g) => [fmtRev(g), `${units(kind, g.nodes)}, ${g.ready} ready`, g.images.join(','), g.hash === current?.hash ? 'current' : ''] as const,
  );
  const w0 = Math.max(...cells.map((c) => c[0].length));
  const w1 = Math.max(...cells.map((c) => c[1].length));
  return cells.map(
    ([rev, count, images, cur], i) =>
      `${i === 0 ? 'Revisions:' : ''}`.padEnd(14) +
      `${rev.padEnd(w0)}  ${count.padEnd(w1)}  ${images}${cur ? `  ${paint(`(${cur})`, 'dim')}` : ''}`.trimEnd(),
  );
}

function undoLine(g: GuardSummary, kind: TargetKind): string | undefined {
  const u = g.lastUndo;
  if (u)
    return `${u.result}: ${fmtRev({ revision: u.fromRevision, hash: u.fromHash })} → ${fmtRev({ revision: u.toRevision, hash: u.toHash })} at ${u.at}${u.message ? ` (${u.message})` : ''}`;
  const p = g.undoPlan;
  // The operator keeps a plan after the template moved on (baking a fix, say): it is stale once the
  // broken revision it was made for is no longer the current one.
  if (p && p.forHash === g.currentRevision?.hash)
    return `would restore ${fmtRev({ revision: p.toRevision, hash: p.toHash })} on ${units(kind, p.nodes)}${p.dryRun ? ` (dry run ${p.dryRun})` : ''}`;
  if (g.undoSkipped) return `not undone: ${g.undoSkipped.reason} (${g.undoSkipped.message})`;
  return undefined;
}

/** The table, with columns padded on the plain text before colour is added. */
function table(rows: readonly NodeRow[], paint: Paint, kind: TargetKind): string[] {
  // A DaemonSet's rows are its nodes, each with its pod; a StatefulSet's are its ordinals' pods, each
  // with the node it runs on.
  const daemon = KINDS[kind].units === 'nodes';
  const head = daemon
    ? ['NODE', 'REVISION', 'POD', 'READY', 'RESTARTS', 'STATUS']
    : ['POD', 'REVISION', 'NODE', 'READY', 'RESTARTS', 'STATUS'];
  const cells = rows.map((r) => [
    r.node,
    revCell(r),
    (daemon ? r.pod : r.host) ?? '-',
    r.pod === undefined ? '-' : r.ready ? 'yes' : 'no',
    r.pod === undefined ? '-' : String(r.restarts),
    `${r.status}${r.owner ? ` (${r.owner})` : ''}${r.notTarget ? ' [not a target]' : ''}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('   ');
  const colour = (r: NodeRow): keyof typeof ANSI | undefined => {
    if (r.kind === 'blocked') return r.owner === 'ConfiguredWait' ? 'yellow' : 'red';
    if (r.kind === 'empty') return 'yellow';
    if (r.status === 'Terminating') return 'dim';
    return r.ready ? 'green' : 'yellow';
  };
  return [
    paint(line(head), 'bold'),
    ...rows.map((r, i) => {
      const c = cells[i]!;
      const style = colour(r);
      const last = c.length - 1;
      const plain = line(c);
      if (!style) return plain;
      // Colour only the STATUS cell: the rest stays readable whatever the terminal's palette.
      const cut = plain.length - (c[last] ?? '').length;
      return plain.slice(0, cut) + paint(c[last] ?? '', style);
    }),
  ];
}

/**
 * The text form: a header, then the node table, then the reason of each blocked or empty node in full.
 * `color` adds ANSI colours (only for a terminal).
 */
export function renderText(v: GetView, opts: { color: boolean }): string {
  const paint: Paint = (text, ...styles) =>
    opts.color && styles.length > 0 ? `\u001b[${styles.map((s) => ANSI[s]).join(';')}m${text}\u001b[0m` : text;
  const label = (l: string): string => `${l}:`.padEnd(14);
  const stateText = (s: string | undefined): string => (s ? paint(s, STATE_COLOUR[s] ?? 'bold') : 'Unknown');
  const out: string[] = [];
  const ds = v.daemonSet;
  const counters = ds.found
    ? `desired ${ds.desired ?? 0}  current ${ds.current ?? 0}  updated ${ds.updated ?? 0}  ready ${ds.ready ?? 0}  available ${ds.available ?? 0}`
    : paint('not found', 'red');
  if (v.guard) {
    const g = v.guard;
    out.push(`${label('RolloutGuard')}${g.namespace}/${g.name}${g.found ? '' : `  ${paint('not found', 'red')}`}`);
    out.push(`${label(ds.kind)}${ds.namespace}/${ds.name}  ${counters}`);
    out.push(`${label('State')}${stateText(g.state)}`);
    if (g.cause) out.push(`${label('Cause')}${g.cause}`);
    if (g.owner) out.push(`${label('Whose fault')}${g.owner}`);
    out.push(...revisionLines(g.revisions, g.currentRevision, paint, ds.kind));
    const undo = undoLine(g, ds.kind);
    if (undo) out.push(`${label('Undo')}${undo}`);
    if (g.message) out.push(`${label('Message')}${g.message}`);
  } else {
    out.push(`${label(ds.kind)}${ds.namespace}/${ds.name}  ${counters}`);
    out.push(
      `${label('State')}${stateText(v.state)}  ${paint('(judged by this command from its start; a RolloutGuard keeps the history)', 'dim')}`,
    );
    for (const [i, g] of (v.guardedBy ?? []).entries()) {
      const what = [g.state ? stateText(g.state) : 'no status yet', g.cause ? `${g.cause}${g.owner ? ` (${g.owner})` : ''}` : '']
        .filter(Boolean)
        .join('  ');
      out.push(`${i === 0 ? label('Guarded by') : ''.padEnd(14)}rg/${g.name}  ${what}`);
    }
    if (v.cause) out.push(`${label('Cause')}${v.cause}`);
    if (v.owner) out.push(`${label('Whose fault')}${v.owner}`);
    out.push(...revisionLines(v.revisions, v.currentRevision, paint, ds.kind));
    if (v.message) out.push(`${label('Message')}${v.message.replace(' (onStall.action is Report).', '.')}`);
  }
  out.push('');
  if (v.nodes.length === 0)
    out.push(ds.found ? `No ${KINDS[ds.kind].words.noUnits}.` : `No ${unitWord(ds.kind)} to show: the ${ds.kind} does not exist.`);
  else out.push(...table(v.nodes, paint, ds.kind));
  const why = v.nodes.filter((r) => r.kind !== 'ok' && r.message);
  if (why.length > 0) {
    out.push('');
    for (const r of why) out.push(`${r.node}: ${r.message}`);
  }
  return out.join('\n');
}

/** The JSON form: the view itself, pretty for one render, one line per render with --watch. */
export function renderJson(v: GetView, opts: { compact: boolean }): string {
  return opts.compact ? JSON.stringify(v) : JSON.stringify(v, null, 2);
}

/** The YAML form: the view itself; `separated` starts it with `---`, as each render after the first under --watch. */
export function renderYaml(v: GetView, opts: { separated: boolean }): string {
  return `${opts.separated ? '---\n' : ''}${emitYaml(v).trimEnd()}`;
}

/**
 * What --watch writes for one render `text` made at `at`: a terminal is redrawn in place; a pipe gets
 * each render in turn, stamped with its time (`first`: nothing was written before).
 */
export function watchFrame(text: string, at: string, opts: { tty: boolean; first: boolean }): string {
  if (opts.tty) return `\u001b[H\u001b[2J${text}\n\nwatching (Ctrl-C to stop), last change ${at}`;
  return `${opts.first ? '' : '\n'}--- ${at}\n${text}`;
}
