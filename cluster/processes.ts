/**
 * Facts about a process by pid, read from /proc: the harness signals only processes it started, and a
 * recycled pid must never be taken for one of them.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The process exists and is neither a zombie nor dead (running or frozen both count). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 follows the parenthesised command name; Z = zombie, X = dead.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** `pid` is alive and runs the executable named `binary` (its argv[0]'s base name). */
export function runsBinary(pid: number, binary: string): boolean {
  try {
    if (!isAlive(pid)) return false;
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(argv0) === binary;
  } catch {
    return false;
  }
}
