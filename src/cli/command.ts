/**
 * What the one-shot commands (`check`, `get`, `list`, `undo`) share around their work: the exit codes, how a command
 * ends, the logger, and the connection to the API server as kubectl would make it.
 */
import { pino, type Logger } from 'pino';
import { ApiClient } from '../k8s/apiClient.js';
import { summarizeError } from '../k8s/apiErrors.js';
import { loadConnection, type Connection } from '../k8s/kubeConfig.js';

/** Exit codes shared by every subcommand. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2, Stalled: 3, NotFound: 4, NotGuardable: 5, Refused: 6 } as const;

/** How a command ends: the exit code, a short verdict and the sentence explaining it. */
export interface Verdict {
  code: number;
  verdict: string;
  message: string;
}

/**
 * The command's logger, on stderr: stdout carries the command's own output, which must stay parseable
 * with --output json.
 */
export function stderrLogger(component: string): Logger {
  return pino(
    { level: process.env.LOG_LEVEL ?? 'warn', base: { component }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
}

/**
 * The API client for `opts`, with its impersonation, and the namespace: `opts.namespace`, else (as
 * kubectl) the current context's. Throws when the kubeconfig cannot be loaded.
 */
export function openConnection(opts: Connection & { namespace?: string }): { client: ApiClient; namespace: string } {
  const c = loadConnection(opts);
  const impersonate = opts.as ? { as: opts.as, ...(opts.asGroups ? { asGroups: opts.asGroups } : {}) } : undefined;
  return { client: ApiClient.fromKubeConfig(c.kc, impersonate ? { impersonate } : {}), namespace: opts.namespace ?? c.namespace };
}

/**
 * {@link openConnection}, or undefined once the reason the kubeconfig cannot be loaded is printed,
 * prefixed by `command`.
 */
export function connect(command: string, opts: Connection & { namespace?: string }): { client: ApiClient; namespace: string } | undefined {
  try {
    return openConnection(opts);
  } catch (e) {
    console.error(`${command}: cannot load kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ''}: ${summarizeError(e)}`);
    return undefined;
  }
}
