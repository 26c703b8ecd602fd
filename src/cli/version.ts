/**
 * The version of this build: package.json's, so `rollout-guard version` and the chart's appVersion say the
 * same. This module runs as dist/src/cli/version.js, three folders below the package root, where package.json
 * is in a checkout, in the npm package and in the image (the image copies package.json beside dist/ for this).
 */
import { readFileSync } from 'node:fs';

/** package.json's `version`, or 'unknown' when package.json cannot be read or names none. */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
