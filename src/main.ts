#!/usr/bin/env node
/**
 * rollout-guard: the command line. `rollout-guard run` starts the operator (runtime/manager.ts);
 * `rollout-guard check` runs the same observe-and-decide logic once per interval for a CI pipeline;
 * `rollout-guard get` shows one rollout node by node, `list` the guards, `undo` makes the operator's undo
 * now, `dashboard` serves a read-only web page of the guards, `completion` prints shell completion. kubectlPlugin.ts runs this same CLI as
 * `kubectl rollout-guard`.
 */
import { UsageError, loadConfig } from './runtime/config.js';
import { startManager } from './runtime/manager.js';
import { runCheck } from './cli/check.js';
import { ExitCode } from './cli/command.js';
import { packageVersion } from './cli/version.js';
import { USAGE } from './cli/usage.js';
import { runGet } from './cli/get.js';
import { runList } from './cli/list.js';
import { runUndo } from './cli/undo.js';
import { runDashboard } from './cli/dashboard.js';
import { runComplete, runCompletion } from './cli/completion.js';
import { KubeConfigError } from './k8s/kubeConfig.js';

async function main(argv: string[]): Promise<number> {
  process.on('unhandledRejection', (err) => {
    console.error('unhandled rejection', err);
    process.exit(ExitCode.Failure);
  });
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'run') {
      await startManager(loadConfig(rest, process.env), { ok: ExitCode.Ok, failure: ExitCode.Failure });
      return -1; // keeps running until a signal
    }
    if (cmd === 'check') return await runCheck(rest);
    if (cmd === 'get') return await runGet(rest);
    if (cmd === 'list') return await runList(rest);
    if (cmd === 'undo') return await runUndo(rest);
    if (cmd === 'dashboard') return await runDashboard(rest);
    if (cmd === 'completion') return runCompletion(rest);
    // The kubectl plugin completion protocol (kubectl_complete-rollout_guard runs it): not for people.
    if (cmd === '__complete') return await runComplete(rest);
    if (cmd === 'version' || cmd === '--version') {
      console.log(`rollout-guard ${packageVersion()}`);
      return ExitCode.Ok;
    }
    if (cmd === '--help' || cmd === '-h' || cmd === 'help') {
      console.log(USAGE);
      return ExitCode.Ok;
    }
    throw new UsageError(cmd ? `unknown command ${cmd}` : 'no command given');
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`rollout-guard: ${e.message}\n${USAGE}`);
      return ExitCode.Usage;
    }
    if (e instanceof KubeConfigError) {
      console.error(`rollout-guard: ${e.message}`);
      return ExitCode.Usage;
    }
    throw e;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exit(ExitCode.Failure);
  },
);
