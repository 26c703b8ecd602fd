/**
 * The version of this build: package.json's, read beside dist/ (the image copies package.json next to
 * dist/ for this), so `rollout-guard version` and the chart's appVersion say the same.
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
