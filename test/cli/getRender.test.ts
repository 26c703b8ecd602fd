/**
 * How `rollout-guard get` shows its view: the text (header, table, reasons, colours), the JSON, and the
 * --watch frames, from fixture observations judged by the real decide.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderJson, renderText, watchFrame } from '../../src/cli/getRender.js';
import { guardSummary, guardsTargeting, type GetView, type NodeRow } from '../../src/cli/getView.js';
import { decide } from '../../src/domain/decide/decide.js';
import type { GuardStatus } from '../../src/api/types.js';
import type { Observation } from '../../src/domain/observation.js';
import type { SlimGuard } from '../../src/api/objects.js';
import { DS_NAME, HASH, T0, nodesOn, sec, targetObs } from '../support/fixtures.js';
import { classicStall, p, stalled, view } from '../support/getViews.js';

const ESC = '\u001b[';

/** The table's data rows as arrays of cells (split on runs of 2+ spaces). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.startsWith('NODE '));
  assert.ok(head >= 0, `no table header in\n${text}`);
  const rows: string[][] = [];
  for (const l of lines.slice(head + 1)) {
    if (l.trim() === '') break;
    rows.push(l.trim().split(/\s{2,}/));
  }
  return rows;
}

describe('renderText', () => {
  const obs = classicStall();
  const status = stalled(obs);

  it('a header with the DaemonSet, state, cause, whose fault and the revisions, then the table and the reasons', () => {
    const text = renderText(view(obs, status), { color: false });
    const lines = text.split('\n');
    assert.equal(lines[0], 'DaemonSet:    gpu-system/decoder  desired 3  current 3  updated 1  ready 2  available 2');
    assert.match(lines[1] ?? '', /^State: +Stalled /);
    assert.ok(lines.includes('Cause:        ImagePullFailure'), text);
    assert.ok(lines.includes('Whose fault:  Revision'), text);
    assert.match(text, /^Revisions: +revision 2 \(bbb222\) +1 node, 0 ready +registry\.example\/decoder:bbb222 +\(current\)$/m);
    assert.match(text, /^ {14}revision 1 \(aaa111\) +2 nodes, 2 ready +registry\.example\/decoder:aaa111$/m);
    assert.match(text, /^Message: +Rollout to revision 2 \(bbb222\) has made no progress for 60s/m);
    assert.doesNotMatch(text, /onStall/, 'get has no onStall setting to point at');
    assert.deepEqual(tableRows(text), [
      ['node-2', '2 (bbb222)', 'decoder-bbb222-node-2', 'no', '0', 'ImagePullBackOff (Revision)'],
      ['node-1', '1 (aaa111)', 'decoder-aaa111-node-1', 'yes', '0', 'Running'],
      ['node-3', '1 (aaa111)', 'decoder-aaa111-node-3', 'yes', '0', 'Running'],
    ]);
    assert.match(text, /^node-2: Back-off pulling image "registry\.example\/decoder:bbb222"$/m);
  });

  it('columns are aligned: every cell of a column starts where its header does', () => {
    const text = renderText(view(obs, status), { color: false });
    const lines = text.split('\n');
    const head = lines.find((l) => l.startsWith('NODE '))!;
    const starts = ['REVISION', 'POD', 'READY', 'RESTARTS', 'STATUS'].map((h) => head.indexOf(h));
    for (const l of lines.slice(lines.indexOf(head) + 1, lines.indexOf(head) + 4)) {
      for (const s of starts) assert.notEqual(l[s - 1]?.trim(), l[s - 1], `column at ${s} in ${JSON.stringify(l)}`);
      for (const s of starts) assert.notEqual(l[s], ' ', `column at ${s} in ${JSON.stringify(l)}`);
    }
  });

  it('no ANSI escape without colour; with colour the state and the statuses are coloured and the alignment is the same', () => {
    const plain = renderText(view(obs, status), { color: false });
    assert.ok(!plain.includes(ESC), 'no escape codes when stdout is not a terminal');
    const coloured = renderText(view(obs, status), { color: true });
    assert.ok(coloured.includes(`State:        ${ESC}31mStalled${ESC}0m`), coloured);
    assert.ok(coloured.includes(`${ESC}31mImagePullBackOff (Revision)${ESC}0m`), coloured);
    assert.ok(coloured.includes(`${ESC}32mRunning${ESC}0m`), coloured);
    // eslint-disable-next-line no-control-regex
    assert.equal(coloured.replace(/\u001b\[[0-9;]*m/g, ''), plain);
  });

  it('rg/NAME: the header is the guard status, with its undo plan; the rows stay live', () => {
    const guardStatus = stalled(obs);
    const g: SlimGuard = {
      metadata: { name: 'decoder-guard', namespace: 'gpu-system' },
      spec: { targetRef: { kind: 'DaemonSet', name: DS_NAME } },
      status: guardStatus,
    };
    const text = renderText(
      view(obs, decide(obs, {}, p, T0).status, {
        kind: 'RolloutGuard',
        name: 'decoder-guard',
        guard: guardSummary('gpu-system', 'decoder-guard', g, DS_NAME),
      }),
      { color: false },
    );
    const lines = text.split('\n');
    assert.equal(lines[0], 'RolloutGuard: gpu-system/decoder-guard');
    assert.equal(lines[1], 'DaemonSet:    gpu-system/decoder  desired 3  current 3  updated 1  ready 2  available 2');
    assert.equal(lines[2], 'State:        Stalled', 'the guard state, not the live first look (Progressing)');
    assert.match(text, /^Undo: +would restore revision 1 \(aaa111\) on 1 node/m);
    assert.equal(tableRows(text)[0]?.[5], 'ImagePullBackOff (Revision)');
  });

  it('rg/NAME: an undo plan made for a revision that is no longer current is not shown', () => {
    const g: SlimGuard = {
      metadata: { name: 'decoder', namespace: 'gpu-system' },
      spec: { targetRef: { kind: 'DaemonSet', name: DS_NAME } },
      status: { ...stalled(obs), state: 'Progressing', currentRevision: { revision: 3, hash: HASH.A } },
    };
    const text = renderText(
      view(obs, status, { kind: 'RolloutGuard', name: 'decoder', guard: guardSummary('gpu-system', 'decoder', g, DS_NAME) }),
      { color: false },
    );
    assert.doesNotMatch(text, /^Undo:/m, text);
  });

  it('rg/NAME of a guard that is gone says so', () => {
    const text = renderText(
      view(obs, status, { kind: 'RolloutGuard', name: 'gone', guard: guardSummary('gpu-system', 'gone', undefined, DS_NAME) }),
      { color: false },
    );
    assert.match(text.split('\n')[0] ?? '', /^RolloutGuard: gpu-system\/gone {2}not found$/);
  });

  it('ds/NAME names the guards that target it, with their state', () => {
    const g = (name: string, target: string, s?: GuardStatus): SlimGuard => ({
      metadata: { name, namespace: 'gpu-system' },
      spec: { targetRef: { kind: 'DaemonSet', name: target } },
      ...(s ? { status: s } : {}),
    });
    const refs = guardsTargeting([g('other', 'node-exporter'), g('b', DS_NAME), g('a', DS_NAME, status)], 'DaemonSet', DS_NAME);
    assert.deepEqual(refs, [{ name: 'a', state: 'Stalled', cause: 'ImagePullFailure', owner: 'Revision' }, { name: 'b' }]);
    const text = renderText(view(obs, status, { guardedBy: refs }), { color: false });
    assert.match(text, /^Guarded by: +rg\/a {2}Stalled {2}ImagePullFailure \(Revision\)$/m);
    assert.match(text, /^ {14}rg\/b {2}no status yet$/m);
  });

  it('before the controller observes a new template the state is Waiting, not Healthy', () => {
    const o = targetObs({ target: { generation: 2, observedGeneration: 1 }, nodes: nodesOn(HASH.A) });
    const v = view(o, decide(o, {}, p, T0).status);
    assert.equal(v.state, 'Waiting');
    assert.match(renderText(v, { color: false }), /^State: +Waiting /m);
  });

  it('a DaemonSet that does not exist', () => {
    const o: Observation = { kind: 'TargetMissing', targetName: DS_NAME };
    const text = renderText(view(o, decide(o, {}, p, T0).status), { color: false });
    assert.match(text, /^DaemonSet: +gpu-system\/decoder {2}not found$/m);
    assert.match(text, /No nodes to show: the DaemonSet does not exist\./);
  });
});

describe('renderJson', () => {
  const obs = classicStall();
  const status = stalled(obs);

  it('the same view as data: header fields and one entry per row, in table order', () => {
    const doc = JSON.parse(renderJson(view(obs, status), { compact: false })) as GetView;
    assert.equal(doc.kind, 'DaemonSet');
    assert.equal(doc.at, new Date(T0 + sec(61)).toISOString());
    assert.deepEqual(doc.daemonSet, {
      kind: 'DaemonSet',
      namespace: 'gpu-system',
      name: DS_NAME,
      found: true,
      desired: 3,
      current: 3,
      updated: 1,
      ready: 2,
      available: 2,
      generation: 2,
      observedGeneration: 2,
    });
    assert.deepEqual([doc.state, doc.cause, doc.owner], ['Stalled', 'ImagePullFailure', 'Revision']);
    assert.deepEqual(doc.currentRevision, { revision: 2, hash: HASH.B });
    assert.deepEqual(
      doc.revisions.map((g) => [g.revision, g.hash, g.nodes, g.ready]),
      [
        [2, HASH.B, 1, 0],
        [1, HASH.A, 2, 2],
      ],
    );
    const blocked: NodeRow | undefined = doc.nodes[0];
    assert.deepEqual(
      {
        node: blocked?.node,
        revision: blocked?.revision,
        hash: blocked?.hash,
        ready: blocked?.ready,
        status: blocked?.status,
        kind: blocked?.kind,
        owner: blocked?.owner,
        cause: blocked?.cause,
      },
      {
        node: 'node-2',
        revision: 2,
        hash: HASH.B,
        ready: false,
        status: 'ImagePullBackOff',
        kind: 'blocked',
        owner: 'Revision',
        cause: 'ImagePullFailure',
      },
    );
    assert.deepEqual(
      doc.nodes.map((r) => r.node),
      ['node-2', 'node-1', 'node-3'],
    );
  });

  it('compact (for --watch) is one line holding the same document', () => {
    const v = view(obs, status);
    const line = renderJson(v, { compact: true });
    assert.ok(!line.includes('\n'));
    assert.deepEqual(JSON.parse(line), JSON.parse(renderJson(v, { compact: false })));
  });
});

describe('watchFrame', () => {
  const at = new Date(T0).toISOString();
  const cases: Array<[string, { tty: boolean; first: boolean }, string]> = [
    [
      'a terminal is cleared and redrawn, with the time of the last change',
      { tty: true, first: true },
      `${ESC}H${ESC}2Jbody\n\nwatching (Ctrl-C to stop), last change ${at}`,
    ],
    [
      'a terminal is redrawn the same way every time',
      { tty: true, first: false },
      `${ESC}H${ESC}2Jbody\n\nwatching (Ctrl-C to stop), last change ${at}`,
    ],
    ['a pipe gets the first render stamped with its time', { tty: false, first: true }, `--- ${at}\nbody`],
    ['a pipe gets each later render after a blank line', { tty: false, first: false }, `\n--- ${at}\nbody`],
  ];
  for (const [what, opts, want] of cases) {
    it(what, () => {
      assert.equal(watchFrame('body', at, opts), want);
    });
  }
});
