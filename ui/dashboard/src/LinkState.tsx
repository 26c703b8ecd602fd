// The connection to the server in words: the page says when what it shows may be stale.
import type { Link } from './stream.js';

const WORDS: Record<Link, string> = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting… (showing the last data)' };

export function LinkState({ link, at }: { link: Link; at: string | undefined }) {
  return (
    <span class={`link link-${link}`} role="status" data-link={link}>
      {WORDS[link]}
      {at ? ` · as of ${new Date(at).toLocaleTimeString()}` : ''}
    </span>
  );
}
