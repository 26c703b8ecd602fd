/**
 * The explanation's tail, accounted for: the operator's log lines read (bench/operatorLog.ts), a sample's
 * parts joined by the status's resourceVersion (bench/explanationParts.ts), and the size's account
 * (bench/tail.ts). Pure: no cluster.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { largestPart, partsOf } from '../../bench/explanationParts.js';
import { OperatorLog } from '../../bench/operatorLog.js';
import { Scrape, parseMetrics } from '../../bench/stats.js';
import { tailLines } from '../../bench/report.js';
import { tailResult } from '../../bench/tail.js';

const T = Date.parse('2026-12-06T12:00:00.000Z');
const at = (ms: number): string => new Date(T + ms).toISOString();

/** The operator's line for an explaining write of `guard` (the moments relative to T). */
function explained(
  guard: string,
  rv: string,
  m: { seen?: number; written?: number; queued: number; pass: number; write: number; wrote: number },
): string {
  return JSON.stringify({
    level: 'info',
    time: at(m.wrote),
    guard,
    msg: 'status names newly failing nodes',
    nodes: ['n1 (agent-abc)'],
    newlyFailing: 1,
    ...(m.seen !== undefined ? { failureSeenAt: at(m.seen) } : {}),
    ...(m.written !== undefined ? { failureWrittenAt: at(m.written) } : {}),
    queuedAt: at(m.queued),
    passStartedAt: at(m.pass),
    writeStartedAt: at(m.write),
    wroteAt: at(m.wrote),
    resourceVersion: rv,
  });
}

describe('bench: the explanation tail', () => {
  it('reads the explaining writes and the pod watches’ changes from the log, and skips everything else', () => {
    const log = new OperatorLog();
    log.line(explained('ns/agent-001', '77', { seen: 100, queued: 50, pass: 300, write: 310, wrote: 900 }));
    log.line(
      JSON.stringify({ time: at(0), daemonSet: 'ns/agent-001', why: 'its rollout needs them', msg: 'watching the pods of the target' }),
    );
    log.line(
      JSON.stringify({
        time: at(5),
        daemonSet: 'ns/agent-001',
        why: 'its pods are no longer needed',
        watchedMs: 5,
        msg: 'no longer watching the pods of the target',
      }),
    );
    log.line(
      JSON.stringify({
        time: at(6),
        informer: 'pods',
        daemonSet: 'ns/agent-001',
        msg: 'the API server ended the watch before its timeout, re-watching',
      }),
    );
    log.line(JSON.stringify({ time: at(7), informer: 'nodes', msg: 'the API server ended the watch before its timeout, re-watching' }));
    log.line('not json');
    log.line('{"broken":');
    log.line(JSON.stringify({ time: at(8), guard: 'ns/x', msg: 'status names newly failing nodes' })); // no moments
    assert.deepEqual(log.explained, [
      {
        guard: 'ns/agent-001',
        resourceVersion: '77',
        failureSeenAt: T + 100,
        queuedAt: T + 50,
        passStartedAt: T + 300,
        writeStartedAt: T + 310,
        wroteAt: T + 900,
      },
    ]);
    assert.deepEqual(
      log.podWatches.map((c) => `${c.what}:${c.target}:${c.why ?? ''}:${c.watchedMs ?? ''}`),
      ['opened:ns/agent-001:its rollout needs them:', 'ended:ns/agent-001:its pods are no longer needed:5', 'endedEarly:ns/agent-001::'],
    );
    assert.equal(log.write('ns/agent-001', '77')?.wroteAt, T + 900);
    assert.equal(log.write('ns/agent-001', '78'), undefined, 'another status');
    assert.equal(log.write('ns/agent-002', '77'), undefined, 'another guard');
    assert.equal(log.write('ns/agent-001', undefined), undefined);
    assert.deepEqual(log.writeFor('ns/agent-001', '77', T + 5_000)?.same, true);
    assert.deepEqual(
      log.writeFor('ns/agent-001', '80', T + 5_000),
      { write: log.explained[0], same: false },
      'the last write answered before',
    );
    assert.equal(log.writeFor('ns/agent-001', '80', T + 800), undefined, 'none answered by then');
  });

  it("a sample's parts add up to it, and the watches' lags are read beside them", () => {
    const log = new OperatorLog();
    log.line(explained('ns/a', '5', { seen: 1_200, queued: 1_000, pass: 1_500, write: 1_520, wrote: 2_300 }));
    const moments = { pod: 'a-xyz', failedAt: T + 1_000, failureWrittenAt: T, explainedAt: T + 4_000, explainedRv: '5' };
    const p = partsOf(moments, log.write('ns/a', '5'))!;
    assert.deepEqual(p, {
      benchToOperator: 0.2,
      toPass: 0.3,
      pass: 0.02,
      write: 0.78,
      reader: 1.7,
      benchWatchLag: 1,
      operatorWatchLag: 1.2,
    });
    const sum = p.benchToOperator + p.toPass + p.pass + p.write + p.reader;
    assert.ok(Math.abs(sum - 3) < 1e-9, `the parts add up to the sample (3 s): ${sum}`);
    assert.equal(largestPart(p), 'reader');
    assert.equal(
      partsOf({ ...moments, twinFailedAt: T + 2_500 }, log.write('ns/a', '5'))!.twinAfterBench,
      1.5,
      'the twin watch saw it 1.5 s later',
    );
    assert.equal(partsOf(moments, undefined), undefined, 'no write found');
    assert.equal(partsOf(moments, log.write('ns/a', '5'), false)!.sameWrite, false, 'the cause came with a later write');
    const noSeen = new OperatorLog();
    // The operator's sighting came with its event's write stamp.
    const stamped = new OperatorLog();
    stamped.line(explained('ns/a', '6', { seen: 1_200, written: 0, queued: 1_000, pass: 1_500, write: 1_520, wrote: 2_300 }));
    stamped.line(explained('ns/a', '7', { seen: 7_300, written: 7_000, queued: 7_300, pass: 7_310, write: 7_320, wrote: 7_500 }));
    assert.equal(stamped.explained[0]!.failureWrittenAt, T);
    const sameWrite = partsOf({ ...moments, explainedRv: '6' }, stamped.write('ns/a', '6'))!;
    assert.deepEqual(
      [sameWrite.operatorWatchLag, sameWrite.operatorEventLag, sameWrite.operatorWriteAfterBench],
      [1.2, 1.2, 0],
      "the bench's failing write, 1.2 s behind in the operator's watch: a late watch",
    );
    const laterWrite = partsOf({ ...moments, explainedAt: T + 8_000, explainedRv: '7' }, stamped.write('ns/a', '7'))!;
    assert.deepEqual(
      [laterWrite.operatorWatchLag, laterWrite.operatorEventLag, laterWrite.operatorWriteAfterBench],
      [7.3, 0.3, 7],
      'seen 7.3 s after the failure, but 0.3 s after a write 7 s later: not a late watch',
    );
    assert.equal(laterWrite.operatorPod, undefined, 'no pod in the line: none to compare');
    const otherPod = new OperatorLog();
    otherPod.line(
      JSON.stringify({
        ...JSON.parse(explained('ns/a', '8', { seen: 7_300, written: 7_000, queued: 7_300, pass: 7_310, write: 7_320, wrote: 7_500 })),
        failurePod: 'a-later',
      }),
    );
    assert.equal(otherPod.explained[0]!.failurePod, 'a-later');
    assert.equal(
      partsOf({ ...moments, explainedAt: T + 8_000, explainedRv: '8' }, otherPod.write('ns/a', '8'))!.operatorPod,
      'a-later',
      'the status named a later failure first',
    );
    assert.equal(
      partsOf({ ...moments, pod: 'a-later', explainedAt: T + 8_000, explainedRv: '8' }, otherPod.write('ns/a', '8'))!.operatorPod,
      undefined,
    );
    assert.equal('operatorEventLag' in p, false, 'a line without the stamp gives no event lag');
    noSeen.line(explained('ns/a', '5', { queued: 1_000, pass: 1_500, write: 1_520, wrote: 2_300 }));
    assert.equal(partsOf(moments, noSeen.write('ns/a', '5')), undefined, 'no moment where the operator saw the failure');
  });

  it("a size's account: slow samples part by part, watch lags by informer, pod watches by what happened", () => {
    const log = new OperatorLog();
    log.line(explained('ns/slow', '9', { seen: 3_000, queued: 3_000, pass: 3_100, write: 3_110, wrote: 3_400 }));
    log.line(explained('ns/fast', '4', { seen: 100, queued: 100, pass: 120, write: 125, wrote: 200 }));
    for (const target of ['ns/slow', 'ns/slow', 'ns/fast', 'other/x'])
      log.line(JSON.stringify({ time: at(0), daemonSet: target, why: 'its rollout needs them', msg: 'watching the pods of the target' }));
    log.line(
      JSON.stringify({
        time: at(1),
        daemonSet: 'ns/slow',
        why: 'its pods are no longer needed',
        events: 40,
        maxLagMs: 6_500,
        msg: 'no longer watching the pods of the target',
      }),
    );
    const metrics = (n: number): Scrape =>
      new Scrape(
        parseMetrics(
          [
            `rollout_guard_watch_delivery_seconds_bucket{le="1",resource="pods"} ${n * 8}`,
            `rollout_guard_watch_delivery_seconds_bucket{le="2",resource="pods"} ${n * 9}`,
            `rollout_guard_watch_delivery_seconds_bucket{le="+Inf",resource="pods"} ${n * 10}`,
            `rollout_guard_watch_delivery_seconds_count{resource="pods"} ${n * 10}`,
            `rollout_guard_watch_delivery_seconds_sum{resource="pods"} ${n * 9}`,
          ].join('\n'),
        ),
        T + n * 10_000,
      );
    const t = tailResult(
      'ns',
      [
        {
          guard: 'slow',
          category: 'exhausted',
          wave: 2,
          fromFailureS: 3.9,
          moments: { pod: 's-1', failedAt: T, explainedAt: T + 3_900, explainedRv: '9' },
        },
        {
          guard: 'fast',
          category: 'broken',
          wave: 0,
          fromFailureS: 0.15,
          moments: { pod: 'f-1', failedAt: T + 50, explainedAt: T + 200, explainedRv: '4' },
        },
        { guard: 'lost', category: 'broken', wave: 1, fromFailureS: 1.5 },
      ],
      log,
      {
        from: metrics(1),
        to: metrics(3),
        benchLags: [
          { t: T + 5_000, lagMs: 7_000 }, // before the window
          { t: T + 15_000, lagMs: 100 },
          { t: T + 20_000, lagMs: 2_000 },
          { t: T + 40_000, lagMs: 9_000 }, // after the window
        ],
      },
    );
    assert.equal(t.samples, 3);
    assert.equal(t.accounted, 2);
    assert.deepEqual(
      t.slow.map((x) => [x.guard, x.fromFailureS, x.largest]),
      [
        ['slow', 3.9, 'benchToOperator'],
        ['lost', 1.5, undefined],
      ],
    );
    assert.deepEqual(t.slow[0]!.parts, { benchToOperator: 3, toPass: 0.1, pass: 0.01, write: 0.29, reader: 0.5 });
    assert.deepEqual(
      t.slowest.map((x) => [x.guard, x.fromFailureS, x.largest]),
      [
        ['slow', 3.9, 'benchToOperator'],
        ['lost', 1.5, undefined],
        ['fast', 0.15, 'write'],
      ],
      'the slowest samples, however fast: what the p99 rests on',
    );
    const lines = tailLines('2000×10 Deployments', t);
    const heading = lines.indexOf('  the slowest samples under 1 s (the p99 rests on them):');
    assert.ok(heading > 0, lines.join('\n'));
    assert.match(
      lines[heading + 1]!,
      /^ {2}fast wave 0 \(broken\) 0\.15 s = bench→operator 50 \+ to the pass 20 \+ pass 5 \+ write 75 \+ reader 0 ms; largest: write/,
    );
    assert.equal(lines.filter((l) => l.startsWith('  slow wave 2 ')).length, 1, 'a sample over 1 s is listed once');
    assert.equal(t.parts.benchToOperator.max, 3);
    assert.equal(t.parts.reader.count, 2);
    assert.equal(t.watchDelivery.pods!.count, 20);
    assert.equal(t.watchDelivery.pods!.overTwoSeconds, 2);
    assert.deepEqual([t.benchWatchDelivery.count, t.benchWatchDelivery.max], [2, 2]);
    assert.equal(t.podWatches.opened, 3, 'the namespace asked only');
    assert.equal(t.podWatches.ended, 1);
    assert.deepEqual(t.podWatches.endedWhy, { 'its pods are no longer needed': 1 });
    assert.deepEqual(t.podWatches.mostOpened, { target: 'ns/slow', opened: 2 });
    assert.deepEqual(t.podWatches.slowest, [{ target: 'ns/slow', at: T + 1, maxLagMs: 6_500, events: 40 }]);
  });
});
