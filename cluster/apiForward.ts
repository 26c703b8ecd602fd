/**
 * How a pod on the real node reaches the API server, standing in for kube-proxy: the API server listens
 * on 127.0.0.1 only, which a pod in its own network namespace cannot reach, so a forwarder listens on the
 * real node's bridge gateway (the host's address on the pods' network, reachable from every pod and from
 * nothing outside the machine) and passes each connection to 127.0.0.1 unchanged. TLS goes through it
 * end to end: the pod checks the API server's own certificate, by a name in it (`kubernetes.default.svc`,
 * which the pod resolves to the gateway through its hostAliases).
 *
 * Run as a process of its own (`node dist/cluster/apiForward.js HOST PORT TARGET_PORT`), started and
 * stopped with the real node.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive } from './processes.js';

const SCRIPT = fileURLToPath(import.meta.url);
const PID_FILE = 'api-forward.pid';

/** The first address of a /24 (`10.244.201.0/24` → `10.244.201.1`): the bridge's, the pods' gateway. */
export function gatewayOf(subnet: string): string {
  const m = /^(\d+\.\d+\.\d+)\.0\/24$/.exec(subnet);
  if (!m) throw new Error(`not a /24 subnet: ${subnet}`);
  return `${m[1]}.1`;
}

/** Starts the forwarder from `host:port` to `127.0.0.1:targetPort` (one left running is stopped first). */
export async function startApiForward(o: { pids: string; logs: string; host: string; port: number; targetPort: number }): Promise<number> {
  await stopApiForward(o.pids);
  await mkdir(o.pids, { recursive: true });
  await mkdir(o.logs, { recursive: true });
  const fd = openSync(path.join(o.logs, 'api-forward.log'), 'a');
  try {
    const child = spawn(process.execPath, [SCRIPT, o.host, String(o.port), String(o.targetPort)], {
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (err) => reject(new Error(`cannot start the API forwarder: ${err.message}`)));
    });
    child.unref();
    await writeFile(path.join(o.pids, PID_FILE), `${pid}\n`);
    await listening(o.host, o.port, 10_000);
    return pid;
  } finally {
    closeSync(fd);
  }
}

/** Stops the forwarder whose pid file is in `pids`, if it runs (and is this script: a recycled pid is never signalled). */
export async function stopApiForward(pids: string): Promise<void> {
  const file = path.join(pids, PID_FILE);
  let pid = 0;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return;
  }
  if (pid > 0 && isAlive(pid) && isForwarder(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 5_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }
  await rm(file, { force: true });
}

function isForwarder(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(SCRIPT);
  } catch {
    return false;
  }
}

async function listening(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host, port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the API forwarder did not listen on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The forwarder itself: each accepted connection piped both ways to 127.0.0.1:targetPort. */
function serve(host: string, port: number, targetPort: number): void {
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort });
    client.pipe(upstream).pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('error', close);
    upstream.once('error', close);
    client.once('close', close);
    upstream.once('close', close);
  });
  server.listen(port, host, () => process.stdout.write(`forwarding ${host}:${port} to 127.0.0.1:${targetPort}\n`));
  // Not server.close(): it waits for every watch connection to end, which they never do on their own.
  process.once('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === SCRIPT) {
  const [host, port, target] = process.argv.slice(2);
  if (!host || !Number(port) || !Number(target)) {
    process.stderr.write('usage: node apiForward.js HOST PORT TARGET_PORT\n');
    process.exit(2);
  }
  serve(host, Number(port), Number(target));
}
