/**
 * A paginated list (`limit`/`continue`) of one collection, gathered into one consistent snapshot (client-go's
 * `tools/pager`).
 */
import type { Logger } from 'pino';
import type { ApiClient } from './apiClient.js';
import { isGone } from './apiErrors.js';

/** How often an expired `continue` token may restart one list before the whole cycle backs off. */
export const MAX_LIST_RESTARTS = 3;

/** What to list. */
export interface ListRequest {
  /** Collection path. */
  path: string;
  /** Server-side label selector. */
  labelSelector?: string | undefined;
  /** Server-side field selector. */
  fieldSelector?: string | undefined;
  /** Page size. */
  pageSize: number;
}

/** A complete list: every item under its key, and the resourceVersion to watch from. */
export interface ListSnapshot<E> {
  items: Map<string, E>;
  resourceVersion: string | undefined;
}

interface ListResponse {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

/**
 * Lists every page of `req`, turning each item into a keyed entry as its page arrives (so only the entries,
 * not the raw pages, are held). Rejects with the first error that restarting cannot cure.
 */
export async function listAll<E>(
  client: ApiClient,
  req: ListRequest,
  toEntry: (raw: unknown) => { key: string; entry: E },
  signal: AbortSignal,
  log: Logger,
): Promise<ListSnapshot<E>> {
  const items = new Map<string, E>();
  let cont: string | undefined;
  let resourceVersion: string | undefined;
  let listRestarts = 0;
  for (;;) {
    let page: ListResponse;
    try {
      page = await client.request<ListResponse>('GET', req.path, {
        query: { labelSelector: req.labelSelector, fieldSelector: req.fieldSelector, limit: req.pageSize, continue: cont },
        signal,
      });
    } catch (err) {
      // A continue token expires with the snapshot it pins (etcd compaction): pages fetched so far belong to
      // that snapshot, so start over without it rather than mixing snapshots.
      if (cont !== undefined && isGone(err) && listRestarts < MAX_LIST_RESTARTS) {
        listRestarts++;
        log.info({ pagesRestart: listRestarts }, 'list continue token expired (410), restarting list');
        items.clear();
        cont = undefined;
        continue;
      }
      throw err;
    }
    for (const raw of page.items ?? []) {
      const { key, entry } = toEntry(raw);
      items.set(key, entry);
    }
    resourceVersion = page.metadata?.resourceVersion;
    cont = page.metadata?.continue ? page.metadata.continue : undefined;
    if (cont === undefined) break;
  }
  return { items, resourceVersion };
}
