/**
 * The announcer sends a guard's Events beside its passes: each once while under way, kept pending when
 * the API server does not take it (or the port throws), and the guard brought back for it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Announcement, GuardStatus } from '../../src/api/types.js';
import { guardRef } from '../../src/api/objects.js';
import { ANNOUNCE_RETRY_MS, Announcer } from '../../src/reconcile/announcer.js';
import { GuardMemory } from '../../src/reconcile/guardMemory.js';

const KEY = 'gpu/decoder';
const at = '2026-01-01T00:00:00.000Z';
const ann = (id: string, reason: string): Announcement => ({
  id,
  at,
  type: 'Normal',
  reason,
  action: 'Observe',
  note: reason,
  onTarget: false,
});
const status = (...list: Announcement[]): GuardStatus => ({ announcements: list });

function setup(emit: (events: readonly Announcement[]) => Promise<string[]>) {
  const memory = new GuardMemory(KEY);
  const requeued: Array<[string, number]> = [];
  const announcer = new Announcer(
    (_g, _t, events) => emit(events),
    (key, ms) => requeued.push([key, ms]),
  );
  const req = (s: GuardStatus) => ({
    memory,
    guard: guardRef('gpu', 'decoder', 'uid'),
    target: undefined,
    status: s,
    log: pino({ level: 'silent' }),
  });
  return { memory, requeued, announcer, req };
}

describe('Announcer', () => {
  const cases: Array<{
    name: string;
    answer: (events: readonly Announcement[]) => Promise<string[]>;
    announced: string[];
    requeued: boolean;
  }> = [
    { name: 'all taken', answer: (e) => Promise.resolve(e.map((x) => x.id)), announced: ['a', 'b'], requeued: false },
    { name: 'one not taken', answer: () => Promise.resolve(['a']), announced: ['a'], requeued: true },
    { name: 'the port throws', answer: () => Promise.reject(new Error('connection reset')), announced: [], requeued: true },
  ];
  for (const c of cases) {
    it(`${c.name}: announced ${JSON.stringify(c.announced)}, guard brought back: ${c.requeued}`, async () => {
      const { memory, requeued, announcer, req } = setup(c.answer);
      const s = status(ann('a', 'RolloutStarted'), ann('b', 'RolloutSuspect'));
      announcer.start(req(s));
      await announcer.settled();
      assert.deepEqual(
        memory.announcements.pending(s).map((x) => x.id),
        ['a', 'b'].filter((id) => !c.announced.includes(id)),
      );
      assert.deepEqual(requeued, c.requeued ? [[KEY, ANNOUNCE_RETRY_MS]] : []);
    });
  }

  it('a failure while settling is logged, never an unhandled rejection; the Event stays pending', async () => {
    const memory = new GuardMemory(KEY);
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'error' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    const announcer = new Announcer(
      () => Promise.resolve([]),
      () => {
        throw new Error('queue gone');
      },
    );
    const s = status(ann('a', 'RolloutStarted'));
    announcer.start({ memory, guard: guardRef('gpu', 'decoder', 'uid'), target: undefined, status: s, log });
    await announcer.settled();
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['settling an announcement failed'],
    );
    assert.deepEqual(
      memory.announcements.pending(s).map((x) => x.id),
      ['a'],
    );
    assert.deepEqual(
      memory.announcements.take(s).map((x) => x.id),
      ['a'],
      'no longer under way: the next pass sends it',
    );
  });

  it('an Event under way is not sent again by a second start; once it fails, the next start sends it', async () => {
    const sent: string[][] = [];
    const answers: Array<(ids: string[]) => void> = [];
    const { announcer, req } = setup((events) => {
      sent.push(events.map((e) => e.id));
      return new Promise<string[]>((resolve) => answers.push(resolve));
    });
    const s = status(ann('a', 'RolloutStarted'));
    announcer.start(req(s));
    announcer.start(req(status(ann('a', 'RolloutStarted'), ann('b', 'RolloutSuspect'))));
    assert.deepEqual(sent, [['a'], ['b']]);
    let settled = false;
    void announcer.settled().then(() => (settled = true));
    answers[0]!([]); // 'a' not taken
    answers[1]!(['b']);
    await announcer.settled();
    assert.equal(settled, true, 'settled once both answered');
    announcer.start(req(s));
    assert.deepEqual(sent.at(-1), ['a'], 'pending again, sent again');
  });
});
