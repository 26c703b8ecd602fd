/**
 * The pinned kubectl, bound to one cluster, and the waits done through it.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './wait.js';

/** Result of one `kubectl` invocation. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for a `kubectl` invocation. */
export interface KubectlOptions {
  /** Namespace, passed as `--namespace`. */
  ns?: string;
  /** Written to kubectl's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  /** Return a non-zero exit instead of throwing. */
  allowFail?: boolean;
}

/** Runs the pinned kubectl against one cluster. Throws on a non-zero exit unless `allowFail`. */
export type Kubectl = (args: readonly string[], opts?: KubectlOptions) => Promise<KubectlResult>;

/** Returns a {@link Kubectl} bound to one binary directory and kubeconfig. */
export function kubectlRunner(binDir: string, kubeconfig: string): Kubectl {
  const bin = path.join(binDir, 'kubectl');
  return (args, opts = {}) =>
    new Promise((resolve, reject) => {
      const full = ['--kubeconfig', kubeconfig, ...(opts.ns ? ['--namespace', opts.ns] : []), ...args];
      const child = spawn(bin, full, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => {
        const result = { code: code ?? (signal ? 128 : 1), stdout, stderr };
        if (result.code !== 0 && !opts.allowFail) {
          reject(new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${stderr.trim() || stdout.trim()}`));
        } else {
          resolve(result);
        }
      });
      child.stdin.on('error', () => undefined); // kubectl may exit before reading all input; `close` reports why
      child.stdin.end(opts.input ?? '');
    });
}

/**
 * Waits until every named CRD is served: its `Established` condition True. Polls what the API says
 * rather than `kubectl wait --for=condition=Established`, which fails at once ("<nil> is of the type
 * <nil>") when it reads a CRD whose status the API server has not written yet.
 */
export async function waitForCrdsEstablished(kubectl: Kubectl, names: readonly string[], opts: { timeoutMs?: number } = {}): Promise<void> {
  await waitFor(
    async () => {
      const r = await kubectl(['get', 'crd', ...names, '-o', 'json'], { allowFail: true });
      if (r.code !== 0) return false;
      const out = JSON.parse(r.stdout) as { items?: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }> };
      const items = out.items ?? [out as { status?: { conditions?: Array<{ type: string; status: string }> } }];
      return (
        items.length === names.length &&
        items.every((c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') === true)
      );
    },
    { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 200, describe: `CRDs ${names.join(', ')} established` },
  );
}
