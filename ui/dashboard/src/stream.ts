// Live data from the server: one server-sent event stream per page shown (the list, or one guard), which
// the browser reconnects by itself; the server pushes every change, so the page never polls.
import { useEffect, useState } from 'preact/hooks';

/** The connection's state, shown in the header. */
export type Link = 'connecting' | 'live' | 'reconnecting';

/** The latest `event` of the stream at `path`, and the link's state; a new path opens a new stream. */
export function useStream<T>(path: string, event: string, onData?: (t: T) => void): { data: T | undefined; link: Link } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [link, setLink] = useState<Link>('connecting');
  useEffect(() => {
    setData(undefined);
    setLink('connecting');
    const source = new EventSource(path);
    source.addEventListener(event, (e) => {
      const v = JSON.parse((e as MessageEvent<string>).data) as T;
      onData?.(v);
      setData(v);
      setLink('live');
    });
    source.onerror = () => setLink('reconnecting');
    source.onopen = () => setLink('live');
    return () => source.close();
  }, [path, event]);
  return { data, link };
}
