// The list of guards: every column of `rollout-guard list` plus what made each guard, filtered by a text
// that any column may contain and by state, sorted by any column (click its header, again to reverse).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { age } from './age.js';
import { LinkState } from './LinkState.js';
import { useStream } from './stream.js';
import type { GuardList, GuardRow } from './types.js';

type Column = { key: keyof GuardRow | 'age'; title: string };

const COLUMNS: Column[] = [
  { key: 'namespace', title: 'Namespace' },
  { key: 'name', title: 'Name' },
  { key: 'kind', title: 'Kind' },
  { key: 'target', title: 'Target' },
  { key: 'state', title: 'State' },
  { key: 'cause', title: 'Cause' },
  { key: 'owner', title: 'Whose fault' },
  { key: 'age', title: 'Age' },
  { key: 'madeBy', title: 'Made by' },
];

/** The value a row is sorted by in column `key`. */
function sortValue(r: GuardRow, key: Column['key']): string {
  // The oldest guard has the greatest age: sorting by age is sorting by creation, reversed.
  if (key === 'age') return r.created;
  const v = r[key];
  return v === undefined ? '' : String(v);
}

export function GuardListPage() {
  const { data, link } = useStream<GuardList>('api/stream', 'list');
  const [filter, setFilter] = useState('');
  const [state, setState] = useState('');
  const [sort, setSort] = useState<{ key: Column['key']; up: boolean }>({ key: 'namespace', up: true });
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 5_000);
    return () => clearInterval(t);
  }, []);
  const guards = data?.guards ?? [];
  const states = useMemo(() => [...new Set(guards.map((g) => g.state).filter(Boolean))].sort(), [guards]);
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const rows = guards.filter(
      (g) =>
        (!state || g.state === state) &&
        (!f || [g.namespace, g.name, g.kind, g.target, g.state, g.cause, g.owner, g.madeBy].some((v) => v.toLowerCase().includes(f))),
    );
    const dir = sort.up === (sort.key !== 'age') ? 1 : -1;
    return rows.sort((a, b) => dir * sortValue(a, sort.key).localeCompare(sortValue(b, sort.key)) || a.name.localeCompare(b.name));
  }, [guards, filter, state, sort]);
  return (
    <section aria-labelledby="list-title">
      <div class="title-row">
        <h1 id="list-title">Guards {data ? (data.namespace ? `in ${data.namespace}` : 'in every namespace') : ''}</h1>
        <LinkState link={link} at={data?.at} />
      </div>
      <div class="filters">
        <label>
          Filter <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} placeholder="name, target, cause…" />
        </label>
        <label>
          State{' '}
          <select value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="">any</option>
            {states.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <span class="count">
          {shown.length} of {guards.length}
        </span>
      </div>
      <table class="guards">
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th aria-sort={sort.key === c.key ? (sort.up ? 'ascending' : 'descending') : 'none'}>
                <button type="button" onClick={() => setSort({ key: c.key, up: sort.key === c.key ? !sort.up : true })}>
                  {c.title}
                  {sort.key === c.key ? (sort.up ? ' ▲' : ' ▼') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((g) => (
            <tr data-guard={`${g.namespace}/${g.name}`} class={`state-${g.state}`}>
              <td>{g.namespace}</td>
              <td>{g.mapped ? <a href={`#/${encodeURIComponent(g.namespace)}/${encodeURIComponent(g.name)}`}>{g.name}</a> : g.name}</td>
              <td>{g.kind}</td>
              <td>{g.target}</td>
              <td>
                <span class={`badge badge-${g.state}`}>{g.state || '—'}</span>
              </td>
              <td>{g.cause}</td>
              <td>{g.owner}</td>
              <td>{age(g.created, now)}</td>
              <td title={g.madeBy ? undefined : 'created as it is, by no policy or selector'}>{g.madeBy || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && guards.length === 0 ? <p class="empty-note">No RolloutGuards found.</p> : null}
    </section>
  );
}
