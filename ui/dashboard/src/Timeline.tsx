// The timeline: the guard's states and the Events of the guard and its workload, oldest first, the stall,
// the undo and any eviction marked in words as well as in colour.
import type { TimelineEntry } from './types.js';

const MARK_WORDS: Record<string, string> = { stall: 'stall', undo: 'undo', eviction: 'eviction', recovered: 'recovered', state: 'state' };

export function Timeline({ entries }: { entries: TimelineEntry[] }) {
  if (entries.length === 0) return <p class="empty-note">No Events yet (the API server keeps Events for an hour).</p>;
  return (
    <ol class="timeline" aria-label="timeline, oldest first">
      {entries.map((e) => (
        <li class={`tl ${e.mark ? `mark-${e.mark}` : ''} ${e.warning ? 'warning' : ''}`} data-reason={e.reason}>
          <time dateTime={e.at}>{Number.isNaN(Date.parse(e.at)) ? '?' : new Date(e.at).toLocaleTimeString()}</time>
          <span class="tl-reason">
            {e.mark ? <span class="tl-mark">{MARK_WORDS[e.mark]}</span> : null}
            {e.reason === 'State' ? `state ${e.message}` : e.reason}
            {e.count > 1 ? ` ×${e.count}` : ''}
            {e.warning ? <span class="sr"> (Warning)</span> : null}
          </span>
          {e.reason === 'State' ? null : <span class="tl-message">{e.message}</span>}
          <span class="tl-on">on {e.on.join(', ')}</span>
        </li>
      ))}
    </ol>
  );
}
