// One guard: its state, cause and message, the revision map with its legend and the details of the
// focused cell, the timeline beside it, the undo plan and the commands Report mode would run, and the
// guard as `kubectl describe` shows it. Live: each change the server pushes is drawn without a reload.
import { useRef, useState } from 'preact/hooks';
import { LinkState } from './LinkState.js';
import { revisionColour, STATE_TEXT } from './palette.js';
import { RevisionMap } from './RevisionMap.js';
import { useStream } from './stream.js';
import { Timeline } from './Timeline.js';
import type { CellState, GuardDetail, MapCell } from './types.js';

const STATES: CellState[] = ['ready', 'progressing', 'blocked', 'stuck', 'empty'];

declare global {
  interface Window {
    /** How long the page took to draw the map of the first detail: read by the tests and the measurement. */
    __dashboardDraw?: { cells: number; ms: number };
  }
}

function Legend({ d }: { d: GuardDetail }) {
  return (
    <div class="legend" aria-label="legend">
      <ul class="revisions" aria-label="revisions">
        {d.revisions.map((r, i) => (
          <li data-revision={r.revision ?? ''} data-hash={r.hash}>
            <span class="swatch" style={{ backgroundColor: revisionColour(i) }} aria-hidden="true" />
            <strong>revision {r.revision ?? '?'}</strong> <code>{r.hash}</code>
            {r.current ? <em> current</em> : null}:{' '}
            <span class="rev-count">
              {r.units} {d.unit}
              {r.units === 1 ? '' : 's'}, {r.ready} ready{r.blocked ? `, ${r.blocked} blocked` : ''}
            </span>
            {r.images.length ? <span class="image"> {r.images.join(', ')}</span> : null}
          </li>
        ))}
      </ul>
      <ul class="states" aria-label="states">
        {STATES.map((s) => (
          <li data-state={s}>
            <span class={`cell small st-${s} legend-cell`} aria-hidden="true" />
            <span class="letter-key">{STATE_TEXT[s].letter}</span> {STATE_TEXT[s].words}: <span class="state-count">{d.counts[s]}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Details({ c, d }: { c: MapCell | undefined; d: GuardDetail }) {
  if (!c) return <div class="details">Hover or focus a cell to see its {d.unit}.</div>;
  const rev = d.revisions[c.group];
  return (
    <dl class="details" aria-live="polite" data-unit={c.unit}>
      <dt>{d.unit}</dt>
      <dd>{c.unit}</dd>
      {c.pod ? (
        <>
          <dt>pod</dt>
          <dd>{c.pod}</dd>
        </>
      ) : null}
      {c.node && c.node !== c.unit ? (
        <>
          <dt>node</dt>
          <dd>{c.node}</dd>
        </>
      ) : null}
      <dt>revision</dt>
      <dd>{rev ? `${rev.revision ?? '?'} (${rev.hash})${rev.current ? ', current' : ''}` : 'none (no pod)'}</dd>
      <dt>state</dt>
      <dd>
        {STATE_TEXT[c.state].words}: {c.status}
      </dd>
      {c.cause ? (
        <>
          <dt>cause</dt>
          <dd>{c.cause}</dd>
        </>
      ) : null}
      {c.owner ? (
        <>
          <dt>whose fault</dt>
          <dd>{c.owner}</dd>
        </>
      ) : null}
      {c.message ? (
        <>
          <dt>message</dt>
          <dd class="message">{c.message}</dd>
        </>
      ) : null}
    </dl>
  );
}

export function GuardPage({ namespace, name }: { namespace: string; name: string }) {
  const received = useRef(0);
  const { data: d, link } = useStream<GuardDetail>(
    `api/stream/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
    'guard',
    () => {
      received.current = performance.now();
    },
  );
  const [focused, setFocused] = useState(0);
  const drawn = () => {
    if (!window.__dashboardDraw && d) window.__dashboardDraw = { cells: d.cells.length, ms: performance.now() - received.current };
  };
  if (!d)
    return (
      <p>
        Loading {namespace}/{name}…
      </p>
    );
  const c = d.cells[Math.min(focused, d.cells.length - 1)];
  return (
    <article class="guard" data-state={d.state}>
      <div class="title-row">
        <h1>
          <a href="#/">Guards</a> / {d.namespace}/{d.name}
        </h1>
        <LinkState link={link} at={d.at} />
      </div>
      {d.note ? (
        <p class="note">{d.note}</p>
      ) : (
        <>
          <div class="summary">
            <span class={`badge badge-${d.state}`} data-testid="state">
              {d.state}
            </span>
            {d.cause ? <span class="cause">cause {d.cause}</span> : null}
            {d.owner ? <span class="owner">whose fault: {d.owner}</span> : null}
            <span class="target">
              {d.kind} {d.target}
            </span>
            {d.counters ? (
              <span class="counters">
                desired {d.counters.desired ?? '?'} · updated {d.counters.updated ?? '?'} · ready {d.counters.ready ?? '?'} · available{' '}
                {d.counters.available ?? '?'}
              </span>
            ) : null}
          </div>
          {d.message ? <p class="message status-message">{d.message}</p> : null}
          <div class="columns">
            <section class="map-section" aria-labelledby="map-title">
              <h2 id="map-title">Revision map</h2>
              <Legend d={d} />
              <RevisionMap detail={d} focused={Math.min(focused, Math.max(0, d.cells.length - 1))} onFocus={setFocused} onDrawn={drawn} />
              <Details c={c} d={d} />
            </section>
            <section class="timeline-section" aria-labelledby="timeline-title">
              <h2 id="timeline-title">Timeline</h2>
              <Timeline entries={d.timeline} />
            </section>
          </div>
          <section aria-labelledby="undo-title">
            <h2 id="undo-title">Undo</h2>
            {d.lastUndo ? (
              <p class="last-undo">
                Last undo {d.lastUndo.result}: revision {d.lastUndo.fromRevision ?? d.lastUndo.fromHash} →{' '}
                {d.lastUndo.toRevision ?? d.lastUndo.toHash} at {new Date(d.lastUndo.at).toLocaleTimeString()}. {d.lastUndo.message}
              </p>
            ) : null}
            {d.undoSkipped ? (
              <p class="undo-skipped">
                Not undone ({d.undoSkipped.reason}): {d.undoSkipped.message}
              </p>
            ) : null}
            {d.commands.length ? (
              <>
                <p>What Report mode would run by hand:</p>
                <pre class="commands">{d.commands.join('\n')}</pre>
              </>
            ) : (
              <p class="empty-note">No undo planned.</p>
            )}
          </section>
        </>
      )}
      {d.describe ? (
        <details class="describe">
          <summary>kubectl describe rolloutguard {d.name}</summary>
          <pre>{d.describe}</pre>
        </details>
      ) : null}
    </article>
  );
}
