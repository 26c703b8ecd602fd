/**
 * The lock that serialises `up` across processes.
 *
 * @module
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FatalWaitError, waitFor } from './wait.js';

/**
 * Serialises `up` across processes (test files run in parallel). mkdir is atomic; a lock whose
 * owner died is taken over.
 */
export async function acquireLock(lock: string, step: (msg: string) => void): Promise<() => Promise<void>> {
  let announced = false;
  // A cold build holds the lock for its whole duration (tens of minutes on 2 cores).
  await waitFor(
    async () => {
      try {
        await mkdir(lock);
        await writeFile(path.join(lock, 'owner'), `${process.pid}\n`);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new FatalWaitError(err as Error);
      }
      const owner = Number((await readFile(path.join(lock, 'owner'), 'utf8').catch(() => '')).trim());
      let ownerAlive = false;
      if (owner > 0) {
        try {
          process.kill(owner, 0);
          ownerAlive = true;
        } catch (err) {
          ownerAlive = (err as NodeJS.ErrnoException).code === 'EPERM';
        }
      }
      // No owner file normally means the owner is between mkdir and writeFile; only an old lock
      // without one is abandoned.
      const orphaned = owner === 0 && Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > 10_000;
      if ((owner > 0 && !ownerAlive) || orphaned) {
        await rm(lock, { recursive: true, force: true });
        return false;
      }
      if (!announced) {
        step(`waiting for another \`up\` (pid ${owner || '?'}) to finish`);
        announced = true;
      }
      return false;
    },
    { timeoutMs: 60 * 60_000, intervalMs: 500, describe: `lock ${lock}` },
  );
  return () => rm(lock, { recursive: true, force: true });
}
