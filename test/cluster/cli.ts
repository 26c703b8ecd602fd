/**
 * `node dist/test/cluster/cli.js up|down|status` — the command-line face of {@link ./controlPlane.ts}
 * behind `npm run cluster:up` / `cluster:down`.
 *
 * @module
 */
import { down, status, up } from './controlPlane.js';

const USAGE = 'usage: node dist/test/cluster/cli.js up|down|status';

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up':
      await up();
      return 0;
    case 'down':
      await down();
      return 0;
    case 'status': {
      const s = await status();
      if (!s.exists) {
        console.log(`no cluster in ${s.dir}`);
        return 1;
      }
      console.log(`cluster dir: ${s.dir}`);
      if (s.kubeconfig) console.log(`export KUBECONFIG=${s.kubeconfig}`);
      console.log(`apiserver: ${s.ports ? `https://127.0.0.1:${s.ports.apiserver}` : '?'} ${s.apiServerReady ? 'ready' : 'NOT ready'}`);
      for (const c of s.components) {
        const state = c.alive ? `running  pid ${c.pid}  rss ${c.rssMiB ?? '?'} MiB` : `stopped${c.pid ? ` (pid ${c.pid})` : ''}`;
        console.log(`  ${c.name.padEnd(24)} ${state}  log ${c.logFile}`);
      }
      return s.apiServerReady && s.components.every((c) => c.alive) ? 0 : 1;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`cluster ${process.argv[2] ?? ''} failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
