/**
 * loadConfig: the policy controller's default follows the watched scope unless it was set explicitly,
 * by flag or by environment.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/runtime/config.js';

describe('loadConfig: policies', () => {
  const cases: Array<{ name: string; argv: string[]; env?: NodeJS.ProcessEnv; want: boolean }> = [
    { name: 'all namespaces: on by default', argv: [], want: true },
    { name: 'some namespaces: off by default', argv: ['--namespaces=team-a'], want: false },
    { name: 'some namespaces, --policies: on', argv: ['--namespaces=team-a', '--policies'], want: true },
    { name: 'some namespaces, --policies=true: on', argv: ['--namespaces', 'team-a', '--policies=true'], want: true },
    { name: 'all namespaces, --policies=false: off', argv: ['--policies=false'], want: false },
    { name: 'some namespaces from the environment, ENABLE_POLICIES=true: on', argv: [], env: { WATCH_NAMESPACES: 'team-a', ENABLE_POLICIES: 'true' }, want: true },
    { name: 'all namespaces, ENABLE_POLICIES=false: off', argv: [], env: { ENABLE_POLICIES: 'false' }, want: false },
    { name: 'an empty ENABLE_POLICIES counts as unset', argv: ['--namespaces=team-a'], env: { ENABLE_POLICIES: '' }, want: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(loadConfig(c.argv, c.env ?? {}).policies, c.want);
    });
  }
});
