/**
 * `node dist/cluster/cli.js up|down|status` — the command-line face of {@link ./controlPlane.ts}
 * behind `npm run cluster:up` / `cluster:down` (`up --real-node` adds a node run by a real kubelet,
 * see {@link ./realNode.ts}). For fault tests, `stop|start|restart COMPONENT`
 * (`stop --kill` for a SIGKILL) act on one component, or on `kwok-<pool>`, an extra kwok managing only the
 * nodes annotated `kwok.x-k8s.io/node=<pool>` (`start` creates it); `RG_CLUSTER_DIR` and the `RG_*_PORT`
 * variables select a private cluster.
 *
 * @module
 */
import { restartComponent, startComponent, status, stopComponent } from './components.js';
import { down, up } from './controlPlane.js';
import { COMPONENTS, parseProcessName, type ProcessName } from './processes.js';

const USAGE = `usage: node dist/cluster/cli.js up [--real-node]|down|status
       node dist/cluster/cli.js stop [--kill] COMPONENT | start COMPONENT | restart [--kill] COMPONENT
       (COMPONENT: ${COMPONENTS.join(', ')}, or kwok-<pool> for a kwok managing the nodes annotated kwok.x-k8s.io/node=<pool>)`;

function component(args: string[]): ProcessName | undefined {
  return parseProcessName(args.find((a) => !a.startsWith('--')) ?? '');
}

async function main(command: string | undefined, args: string[]): Promise<number> {
  switch (command) {
    case 'stop':
    case 'start':
    case 'restart': {
      const name = component(args);
      if (!name) {
        console.error(USAGE);
        return 2;
      }
      const signal = args.includes('--kill') ? 'SIGKILL' : 'SIGTERM';
      if (command === 'stop') await stopComponent(name, { signal });
      else if (command === 'start') await startComponent(name);
      else await restartComponent(name, { signal });
      return 0;
    }
    case 'up':
      await up(args.includes('--real-node') ? { realNode: true } : {});
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

main(process.argv[2], process.argv.slice(3)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`cluster ${process.argv[2] ?? ''} failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
