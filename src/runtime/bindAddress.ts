/**
 * Listen addresses in the form controller-runtime's `--metrics-bind-address` and
 * `--health-probe-bind-address` take, so that manifests written for kubebuilder operators read the same:
 * `host:port`, `:port` (every interface), `[v6]:port`, and `0` for "do not listen at all". Port 0 asks the
 * kernel for a free port, which is how tests run several operators side by side.
 */
import { isIP, type Server } from 'node:net';

/** Where to listen. `host` undefined means every interface (IPv4 and IPv6 where the host has both). */
export interface BindAddress {
  host?: string;
  port: number;
}

/** The value that turns a listener off, as in controller-runtime. */
export const DISABLED = '0';

/**
 * Parses `host:port`, `:port` or `[v6]:port`; `null` for {@link DISABLED}. Throws an Error naming what is
 * wrong; the caller adds which flag it came from.
 */
export function parseBindAddress(value: string): BindAddress | null {
  const v = value.trim();
  if (v === DISABLED) return null;
  const colon = v.lastIndexOf(':');
  // A bare port ("8080") is refused rather than guessed at: controller-runtime refuses it too, and
  // accepting it would make "0" (disabled) and "0" (an ephemeral port) impossible to tell apart.
  if (colon < 0) throw new Error(`wants host:port, :port or 0 (disabled), got ${JSON.stringify(value)}`);
  let host = v.slice(0, colon);
  const portText = v.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) {
    throw new Error(`wants a port from 0 to 65535 after the last colon, got ${JSON.stringify(value)}`);
  }
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
    if (isIP(host) !== 6) throw new Error(`wants an IPv6 address inside [ ], got ${JSON.stringify(value)}`);
  } else if (host.includes(':')) {
    throw new Error(`wants an IPv6 host in brackets ([::1]:8080), got ${JSON.stringify(value)}`);
  } else if (host !== '' && isIP(host) === 0 && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host)) {
    throw new Error(`wants an IP address or host name before the port, got ${JSON.stringify(value)}`);
  }
  return host === '' ? { port: Number(portText) } : { host, port: Number(portText) };
}

/** The address as it would be written on the command line (for logs and messages). */
export function formatBindAddress(a: BindAddress | null): string {
  if (a === null) return DISABLED;
  const host = a.host === undefined ? '' : a.host.includes(':') ? `[${a.host}]` : a.host;
  return `${host}:${a.port}`;
}

/** Starts `server` listening at `a` and resolves with the bound port (the kernel's choice for port 0). */
export function listen(server: Server, a: BindAddress): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(a.host === undefined ? { port: a.port } : { port: a.port, host: a.host }, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : a.port);
    });
  });
}
