/**
 * The pinned binaries (etcd, kube-apiserver, …, kubectl), built from Go modules by `cluster/build.sh`
 * and cached.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { paths } from './paths.js';

/**
 * Runs build.sh only (a cached run takes well under a second) and returns the binary directory;
 * for callers that need the pinned kubectl but not a cluster of their own.
 */
export async function buildBinaries(opts: { log?: (line: string) => void } = {}): Promise<string> {
  return (await runBuild(paths().buildScript, opts.log ?? ((line: string) => console.log(line)))).binDir;
}

/** Runs build.sh, streaming its progress (stderr) line by line; the bin dir is stdout's last line. */
export function runBuild(script: string, log: (line: string) => void): Promise<{ binDir: string; built: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    let built = false;
    const tail: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      pending += d;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (/: building/.test(line)) built = true;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        log(line);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending) log(pending);
      const binDir = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !binDir) {
        reject(new Error(`${script} exited ${code}\n${tail.join('\n')}`));
      } else {
        resolve({ binDir, built });
      }
    });
  });
}
