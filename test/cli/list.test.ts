/**
 * `rollout-guard list` and `get -A`: the arguments, and the table, names and List documents kubectl
 * would print for the same guards.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { listsGuards } from '../../src/cli/get.js';
import { parseListArgs } from '../../src/cli/list.js';
import { humanAge, noneFound, renderList, renderTable, type ListedGuard } from '../../src/cli/listRender.js';
import { UsageError } from '../../src/runtime/config.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const guard = (namespace: string, name: string, status?: ListedGuard['status']): ListedGuard => ({
  metadata: { namespace, name, creationTimestamp: '2025-01-01T11:55:00Z' },
  spec: { targetRef: { name: `${name}-ds` } },
  ...(status ? { status } : {}),
});
const GUARDS = [
  guard('prod', 'decoder', {
    state: 'Stalled',
    desired: 3,
    updated: 1,
    ready: 2,
    cause: 'ImagePullFailure',
    owner: 'Revision',
    blockedNodeCount: 1,
    message: 'no progress',
  }),
  guard('gpu', 'agent', { state: 'Healthy', desired: 2, updated: 2, ready: 2 }),
  guard('gpu', 'new'),
];

describe('parseListArgs', () => {
  it('defaults, -n, -A and the outputs', () => {
    assert.deepEqual(parseListArgs([]), { allNamespaces: false, output: 'text' });
    assert.deepEqual(parseListArgs(['-n', 'gpu', '-o', 'wide']), { namespace: 'gpu', allNamespaces: false, output: 'wide' });
    assert.deepEqual(parseListArgs(['--all-namespaces', '-o', 'name']), { allNamespaces: true, output: 'name' });
    assert.deepEqual(parseListArgs(['-A', '--output=yaml', '--context', 'kind']), { allNamespaces: true, output: 'yaml', context: 'kind' });
  });
  it('usage errors: a target, an unknown output', () => {
    assert.throws(
      () => parseListArgs(['rg/x']),
      (e: unknown) => e instanceof UsageError && /takes no target/.test(e.message),
    );
    assert.throws(
      () => parseListArgs(['-A', 'rg/x'], 'get'),
      (e: unknown) => e instanceof UsageError && /give no target/.test(e.message),
    );
    assert.throws(
      () => parseListArgs(['-o', 'xml']),
      (e: unknown) => e instanceof UsageError && /text, wide, json, yaml or name/.test(e.message),
    );
  });
});

describe('get lists the guards with -A or without a target', () => {
  const cases: Array<[string[], boolean]> = [
    [[], true],
    [['-A'], true],
    [['-n', 'gpu', '-o', 'yaml'], true],
    [['rg/decoder'], false],
    [['-n', 'gpu', 'ds/decoder', '-o', 'json'], false],
    [['rg/decoder', '-A'], true],
  ];
  for (const [args, want] of cases) it(`${JSON.stringify(args)} → ${want}`, () => assert.equal(listsGuards(args), want));
  it('--watch follows one rollout', () => {
    assert.throws(
      () => listsGuards(['-A', '-w']),
      (e: unknown) => e instanceof UsageError && /--watch follows one rollout/.test(e.message),
    );
  });
});

describe('humanAge: kubectl ages', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [119_000, '119s'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [3 * 3600_000, '3h'],
    [3 * 3600_000 + 60_000, '3h1m'],
    [8 * 3600_000, '8h'],
    [50 * 3600_000, '2d2h'],
    [10 * 86400_000, '10d'],
    [800 * 86400_000, '2y'],
  ];
  for (const [ms, want] of cases) it(`${ms} ms → ${want}`, () => assert.equal(humanAge(ms), want));
});

describe('renderTable', () => {
  it("the CRD's printer columns, sorted by namespace then name, NAMESPACE first across namespaces", () => {
    const lines = renderTable(GUARDS, { allNamespaces: true, wide: false, now: NOW }).split('\n');
    assert.deepEqual(
      lines.map((l) => l.split(/\s{2,}/)),
      [
        ['NAMESPACE', 'NAME', 'TARGET', 'KIND', 'STATE', 'DESIRED', 'UPDATED', 'READY', 'CAUSE', 'FAULT', 'AGE'],
        ['gpu', 'agent', 'agent-ds', 'Healthy', '2', '2', '2', '5m'],
        ['gpu', 'new', 'new-ds', '5m'],
        ['prod', 'decoder', 'decoder-ds', 'Stalled', '3', '1', '2', 'ImagePullFailure', 'Revision', '5m'],
      ],
    );
    const head = lines[0]!;
    assert.equal(lines[3]!.indexOf('Stalled'), head.indexOf('STATE'), 'columns line up with their headers');
    assert.equal(lines[2]!.lastIndexOf('5m'), head.indexOf('AGE'), 'an empty cell keeps the columns after it in place');
  });

  it('one namespace has no NAMESPACE column; wide adds BLOCKED and MESSAGE', () => {
    const text = renderTable([GUARDS[0]!], { allNamespaces: false, wide: true, now: NOW });
    assert.deepEqual(
      text.split('\n').map((l) => l.split(/\s{2,}/)),
      [
        ['NAME', 'TARGET', 'KIND', 'STATE', 'DESIRED', 'UPDATED', 'READY', 'CAUSE', 'FAULT', 'BLOCKED', 'MESSAGE', 'AGE'],
        ['decoder', 'decoder-ds', 'Stalled', '3', '1', '2', 'ImagePullFailure', 'Revision', '1', 'no progress', '5m'],
      ],
    );
  });
});

describe('renderList', () => {
  it('json and yaml: a List of the guards as stored, with their apiVersion and kind', () => {
    const json = JSON.parse(renderList(GUARDS, 'json', { allNamespaces: true, now: NOW })!) as { kind: string; items: ListedGuard[] };
    const yaml = parse(renderList(GUARDS, 'yaml', { allNamespaces: true, now: NOW })!) as unknown;
    assert.deepEqual(yaml, json);
    assert.equal(json.kind, 'List');
    assert.deepEqual(
      json.items.map((g) => [(g as { kind?: string }).kind, g.metadata?.namespace, g.metadata?.name]),
      [
        ['RolloutGuard', 'gpu', 'agent'],
        ['RolloutGuard', 'gpu', 'new'],
        ['RolloutGuard', 'prod', 'decoder'],
      ],
    );
  });
  it("name: kubectl's resource/name lines", () => {
    assert.equal(
      renderList(GUARDS, 'name', { allNamespaces: true, now: NOW }),
      'rolloutguard.rolloutguard.dev/agent\nrolloutguard.rolloutguard.dev/new\nrolloutguard.rolloutguard.dev/decoder',
    );
  });
  it('no guards: nothing on stdout for a table (kubectl says so on stderr), an empty List for json', () => {
    assert.equal(renderList([], 'text', { allNamespaces: false, now: NOW }), undefined);
    assert.equal(renderList([], 'name', { allNamespaces: false, now: NOW }), undefined);
    assert.deepEqual((JSON.parse(renderList([], 'json', { allNamespaces: false, now: NOW })!) as { items: unknown[] }).items, []);
    assert.equal(noneFound('gpu'), 'No resources found in gpu namespace.');
    assert.equal(noneFound(undefined), 'No resources found');
  });
});
