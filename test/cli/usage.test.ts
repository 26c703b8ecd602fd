/**
 * The usage of the whole command line names every command a person can complete, so that `--help` and the
 * shell completion offer the same commands.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/completion.js';
import { USAGE } from '../../src/cli/usage.js';

describe('USAGE', () => {
  it('has a line for each command completion offers (help is the usage itself)', () => {
    const lines = USAGE.split('\n').map((l) => l.trim());
    for (const cmd of Object.keys(COMMANDS).filter((c) => c !== 'help'))
      assert.ok(
        lines.some((l) => l.startsWith(`rollout-guard ${cmd} `) || l === `rollout-guard ${cmd}`),
        `no usage line for ${cmd}`,
      );
  });
});
