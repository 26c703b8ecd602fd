/**
 * `npm run demo -- --dashboard`: the dashboard (`rollout-guard dashboard`, src/cli/dashboard.ts) started
 * beside the broken-image story, on the story's namespace, so a newcomer watches the stall and the undo
 * as a picture while the story tells them in words. It listens on 127.0.0.1:3200, or on a free port when
 * that one is taken, and stays up after the story on a terminal until Ctrl-C.
 */
import { pino } from 'pino';
import { startDashboard, type RunningDashboard } from '../src/cli/dashboard.js';
import { DEFAULT_ADDRESS, DEFAULT_PORT } from '../src/cli/dashboardServer.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import { systemClock } from '../src/runtime/clock.js';
import { out, section } from './shared.js';

/** Starts the dashboard of namespace `ns` through `kubeconfig` and prints its URL. */
export async function startStoryDashboard(kubeconfig: string, ns: string): Promise<RunningDashboard> {
  section('The dashboard');
  const client = ApiClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  const log = pino({ level: 'silent' });
  const start = (port: number): Promise<RunningDashboard> =>
    startDashboard({ address: DEFAULT_ADDRESS, port, namespace: ns }, client, systemClock, log);
  let d: RunningDashboard;
  try {
    d = await start(DEFAULT_PORT).catch((e: unknown) => {
      // Another dashboard (or anything else) has the usual port: any free one will do for the story.
      if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') return start(0);
      throw e;
    });
  } catch (e) {
    client.close();
    throw e;
  }
  out(`    open ${d.url}#/${ns}/decoder (the guard's map and timeline; ${d.url} lists the guards)`);
  return {
    ...d,
    stop: async () => {
      await d.stop();
      client.close();
    },
  };
}

/** On a terminal, keeps the dashboard up after the story until Ctrl-C (whose handler cleans up and exits). */
export async function serveUntilInterrupted(d: RunningDashboard, ci: boolean): Promise<void> {
  if (ci) return;
  out(`\nThe dashboard is still at ${d.url}: Ctrl-C ends the demo.`);
  await new Promise<never>(() => undefined);
}
