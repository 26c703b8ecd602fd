// The revision map: one cell per unit of the rollout (a node, an ordinal or a pod), grouped by revision
// (newest first, each group in its revision's colour) and marked by state with a pattern and a letter.
// Hovering or focusing a cell shows its details; Tab enters the map on one cell (a roving tabindex, so
// 5,000 cells are one Tab stop), arrow keys move, Home and End jump to the ends.
//
// Readable from 3 units to 5,000 on one screen: the cells shrink as they multiply (with a name and a
// letter while there are few, a letter while there is room, a pattern alone beyond), and a group is one
// flex-wrapped block, so the browser lays 5,000 cells out in one pass.
import { memo } from 'preact/compat';
import { useEffect, useRef } from 'preact/hooks';
import { revisionColour, STATE_TEXT } from './palette.js';
import type { GuardDetail, MapCell } from './types.js';

/** How cells are drawn, by how many there are. */
function density(n: number): 'large' | 'medium' | 'small' | 'tiny' {
  if (n <= 60) return 'large';
  if (n <= 800) return 'medium';
  if (n <= 2000) return 'small';
  return 'tiny';
}

/** A cell's label for a screen reader and its tooltip: every fact the details show, in one line. */
export function cellLabel(c: MapCell, unit: string): string {
  const rev = c.revision !== undefined ? `revision ${c.revision}` : c.hash ? `revision ${c.hash}` : 'no pod';
  const why =
    c.state === 'blocked' || c.state === 'stuck' || c.state === 'empty'
      ? `: ${c.status}${c.cause ? `, ${c.cause}` : ''}${c.owner ? `, ${c.owner}'s fault` : ''}`
      : '';
  return `${unit} ${c.unit}, ${rev}, ${STATE_TEXT[c.state].words}${why}`;
}

interface MapProps {
  detail: GuardDetail;
  focused: number;
  onFocus: (i: number) => void;
  /** Called once the map of a new detail has been laid out and painted. */
  onDrawn?: () => void;
}

/** The next cell from `from` for `key`, by layout: up and down go to the nearest cell in the row above or below. */
function move(cells: HTMLElement[], from: number, key: string): number {
  const n = cells.length;
  if (key === 'ArrowRight') return Math.min(n - 1, from + 1);
  if (key === 'ArrowLeft') return Math.max(0, from - 1);
  if (key === 'Home') return 0;
  if (key === 'End') return n - 1;
  const here = cells[from]!.getBoundingClientRect();
  const down = key === 'ArrowDown';
  let best = from;
  let bestScore = Infinity;
  for (let i = down ? from + 1 : from - 1; down ? i < n : i >= 0; down ? i++ : i--) {
    const r = cells[i]!.getBoundingClientRect();
    const dy = down ? r.top - here.top : here.top - r.top;
    if (dy < 1) continue;
    // The first row past this one only: the nearest column in it.
    if (bestScore !== Infinity && dy > bestScore + 1) break;
    const score = dy + Math.abs(r.left - here.left) / 1e4;
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

const Cell = memo(function Cell(props: { c: MapCell; i: number; unit: string; size: string; tab: boolean }) {
  const { c, i, unit, size, tab } = props;
  const s = STATE_TEXT[c.state];
  return (
    <div
      role="option"
      aria-selected={tab}
      tabIndex={tab ? 0 : -1}
      class={`cell ${size} st-${c.state}`}
      style={{ backgroundColor: revisionColour(c.group) }}
      data-i={i}
      data-unit={c.unit}
      data-state={c.state}
      data-cause={c.cause ?? ''}
      title={cellLabel(c, unit)}
      aria-label={cellLabel(c, unit)}
    >
      {size === 'small' || size === 'tiny' ? null : <span class="letter">{s.letter}</span>}
      {size === 'large' ? <span class="name">{c.unit}</span> : null}
    </div>
  );
});

export function RevisionMap({ detail, focused, onFocus, onDrawn }: MapProps) {
  const box = useRef<HTMLDivElement>(null);
  const size = density(detail.cells.length);
  useEffect(() => {
    // After the commit, the next frame is painted with the new cells.
    if (onDrawn) requestAnimationFrame(() => onDrawn());
  }, [detail]);
  const groups: Array<{ title: string; group: number; from: number; cells: MapCell[] }> = [];
  detail.cells.forEach((c, i) => {
    const last = groups[groups.length - 1];
    if (last && last.group === c.group) last.cells.push(c);
    else {
      const r = detail.revisions[c.group];
      groups.push({
        title: r ? `revision ${r.revision ?? '?'} (${r.hash})${r.current ? ', current' : ''}` : 'no pod',
        group: c.group,
        from: i,
        cells: [c],
      });
    }
  });
  const onKey = (e: KeyboardEvent) => {
    if (!['ArrowRight', 'ArrowLeft', 'ArrowUp', 'ArrowDown', 'Home', 'End'].includes(e.key)) return;
    e.preventDefault();
    const cells = Array.from(box.current!.querySelectorAll<HTMLElement>('.cell'));
    const next = move(cells, focused, e.key);
    onFocus(next);
    cells[next]?.focus();
  };
  const fromEvent = (e: Event): number | undefined => {
    const el = (e.target as HTMLElement).closest<HTMLElement>('.cell');
    return el ? Number(el.dataset.i) : undefined;
  };
  return (
    <div
      ref={box}
      class="map"
      role="listbox"
      aria-label={`revision map: one cell per ${detail.unit}, ${detail.cells.length} in all; arrow keys move`}
      onKeyDown={onKey}
      onMouseOver={(e) => {
        const i = fromEvent(e);
        if (i !== undefined) onFocus(i);
      }}
      onFocusIn={(e) => {
        const i = fromEvent(e);
        if (i !== undefined) onFocus(i);
      }}
    >
      {groups.map((g) => (
        <div class="group" role="group" aria-label={g.title}>
          <div class="group-title">
            <span class="swatch" style={{ backgroundColor: revisionColour(g.group) }} aria-hidden="true" /> {g.title}
          </div>
          <div class={`cells cells-${size}`}>
            {g.cells.map((c, k) => (
              <Cell c={c} i={g.from + k} unit={detail.unit} size={size} tab={g.from + k === focused} />
            ))}
          </div>
        </div>
      ))}
      {detail.cells.length === 0 ? <p class="empty-note">{detail.noUnits}</p> : null}
    </div>
  );
}
