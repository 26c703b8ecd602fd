/**
 * Metrics: the informer series are read from the informers at scrape time, and their counters only
 * grow by what grew since the previous scrape.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InformerStats } from '../../src/k8s/informer.js';
import type { GuardTarget } from '../../src/reconcile/ports.js';
import { Metrics, type InformerSample } from '../../src/runtime/metrics.js';

const ds = (name: string): GuardTarget => ({ kind: 'DaemonSet', name });
const sts = (name: string): GuardTarget => ({ kind: 'StatefulSet', name });

/** `name{labels} value` lines of one scrape, keyed by everything before the value. */
async function scrape(m: Metrics): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await m.registry.metrics()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('Metrics', () => {
  it("exports each informer's objects, relists, restarts and last event time, labelled by resource, namespace and DaemonSet", async () => {
    const m = new Metrics(false);
    const pods: InformerStats = { objects: 3, relists: 1, restarts: 0, earlyEnds: 0, lastEventAt: 1_700_000_000_500 };
    const nodes: InformerStats = { objects: 2, relists: 1, restarts: 0, earlyEnds: 0 };
    const samples: InformerSample[] = [
      { resource: 'pods', namespace: 'team-a', stats: pods },
      { resource: 'nodes', namespace: '', stats: nodes },
    ];
    m.observeInformers(() => samples);

    let s = await scrape(m);
    assert.equal(s.get('rollout_guard_informer_objects{resource="pods",namespace="team-a",daemonset=""}'), 3);
    assert.equal(s.get('rollout_guard_informer_objects{resource="nodes",namespace="",daemonset=""}'), 2);
    assert.equal(s.get('rollout_guard_informer_relists_total{resource="pods",namespace="team-a",daemonset=""}'), 1);
    assert.equal(
      s.get('rollout_guard_informer_restarts_total{resource="nodes",namespace="",daemonset=""}'),
      0,
      'a healthy informer shows 0, not nothing',
    );
    assert.equal(
      s.get('rollout_guard_informer_last_event_timestamp_seconds{resource="pods",namespace="team-a",daemonset=""}'),
      1_700_000_000.5,
    );
    assert.equal(
      s.has('rollout_guard_informer_last_event_timestamp_seconds{resource="nodes",namespace="",daemonset=""}'),
      false,
      'no event yet: no timestamp',
    );

    // A restart and a relist later, scraped twice: the counters follow the informer, not the scrape count.
    pods.restarts = 1;
    pods.earlyEnds = 2;
    pods.relists = 2;
    pods.objects = 5;
    await scrape(m);
    s = await scrape(m);
    assert.equal(s.get('rollout_guard_informer_restarts_total{resource="pods",namespace="team-a",daemonset=""}'), 1);
    assert.equal(s.get('rollout_guard_informer_relists_total{resource="pods",namespace="team-a",daemonset=""}'), 2);
    assert.equal(s.get('rollout_guard_informer_watch_early_ends_total{resource="pods",namespace="team-a",daemonset=""}'), 2);
    assert.equal(s.get('rollout_guard_informer_objects{resource="pods",namespace="team-a",daemonset=""}'), 5);
  });

  it('a pod watch that ended takes its series with it; one that starts again begins from 0', async () => {
    const m = new Metrics(false);
    const watch: InformerStats = { objects: 40, relists: 2, restarts: 1, earlyEnds: 3, lastEventAt: 1_700_000_000_000 };
    const nodes: InformerStats = { objects: 2, relists: 1, restarts: 0, earlyEnds: 0 };
    let samples: InformerSample[] = [
      { resource: 'pods', namespace: 'gpu', daemonset: 'agent', stats: watch },
      { resource: 'nodes', namespace: '', stats: nodes },
    ];
    m.observeInformers(() => samples);
    let s = await scrape(m);
    assert.equal(s.get('rollout_guard_informer_objects{resource="pods",namespace="gpu",daemonset="agent"}'), 40);
    assert.equal(s.get('rollout_guard_informer_relists_total{resource="pods",namespace="gpu",daemonset="agent"}'), 2);

    samples = samples.filter((x) => x.resource !== 'pods');
    s = await scrape(m);
    const left = [...s.keys()].filter((k) => k.includes('daemonset="agent"'));
    assert.deepEqual(left, [], 'no series of the ended watch remains');
    assert.equal(
      s.get('rollout_guard_informer_relists_total{resource="nodes",namespace="",daemonset=""}'),
      1,
      'the other informers keep theirs',
    );

    samples = [
      ...samples,
      { resource: 'pods', namespace: 'gpu', daemonset: 'agent', stats: { objects: 3, relists: 1, restarts: 0, earlyEnds: 0 } },
    ];
    s = await scrape(m);
    assert.equal(s.get('rollout_guard_informer_relists_total{resource="pods",namespace="gpu",daemonset="agent"}'), 1);
    assert.equal(s.get('rollout_guard_informer_restarts_total{resource="pods",namespace="gpu",daemonset="agent"}'), 0);
  });

  it("a watch event's lag is read on the API server's clock, never below 0", async () => {
    const m = new Metrics(false);
    m.observeDelivery('pods', 10_000, 12_500, undefined); // 2.5 s behind
    m.observeDelivery('pods', 10_000, 9_000, 2_000); // the server's clock 2 s ahead: 1 s behind
    m.observeDelivery('nodes', 10_000, 9_000, undefined); // stamped "later" than it arrived: 0
    const s = await scrape(m);
    assert.equal(s.get('rollout_guard_watch_delivery_seconds_count{resource="pods"}'), 2);
    assert.equal(s.get('rollout_guard_watch_delivery_seconds_sum{resource="pods"}'), 3.5);
    assert.equal(s.get('rollout_guard_watch_delivery_seconds_sum{resource="nodes"}'), 0);
    assert.equal(s.get('rollout_guard_watch_delivery_seconds_bucket{le="1",resource="pods"}'), 1);
  });

  it('takes one informer source per process', () => {
    const m = new Metrics(false);
    m.observeInformers(() => []);
    assert.throws(() => m.observeInformers(() => []), /already registered/);
  });

  it('a deleted guard takes all its series with it: state, stalls by cause and owner, failures', async () => {
    const m = new Metrics(false);
    m.setState('ns', 'g1', ds('decoder'), 'Stalled');
    m.countStall('ns', 'g1', ds('decoder'), 'NodeNotReady', 'Node');
    m.countStall('ns', 'g1', ds('decoder'), 'ImagePullFailure', 'Revision');
    m.countFailure('ns', 'g1', ds('decoder'), 'CrashLoop');
    m.countStall('ns', 'g2', ds('agent'), 'ImagePullFailure', 'Revision');
    let s = await scrape(m);
    assert.equal(
      s.get(
        'rollout_guard_stalls_detected_total{namespace="ns",guard="g1",kind="DaemonSet",target="decoder",daemonset="decoder",cause="NodeNotReady",owner="Node"}',
      ),
      1,
    );
    assert.equal(
      s.get(
        'rollout_guard_failures_detected_total{namespace="ns",guard="g1",kind="DaemonSet",target="decoder",daemonset="decoder",cause="CrashLoop"}',
      ),
      1,
    );
    m.forgetGuard('ns', 'g1');
    s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes('guard="g1"')),
      [],
    );
    assert.equal(
      s.get(
        'rollout_guard_stalls_detected_total{namespace="ns",guard="g2",kind="DaemonSet",target="agent",daemonset="agent",cause="ImagePullFailure",owner="Revision"}',
      ),
      1,
      'other guards keep theirs',
    );
  });

  it('the verdict series: one per guard, its state, cause and owner in labels, replaced as the verdict changes, gone with the guard', async () => {
    const m = new Metrics(false);
    const verdictKeys = async (): Promise<string[]> =>
      [...(await scrape(m)).keys()].filter((k) => k.startsWith('rollout_guard_verdict_info')).sort();
    m.setState('gpu', 'toolkit', ds('toolkit'), 'Suspect', 'ImagePullFailure', 'Revision');
    m.setState('db', 'pg', sts('postgres'), 'Healthy');
    m.setState('gpu', 'toolkit', ds('toolkit'), 'Stalled', 'ImagePullFailure', 'Revision');
    assert.deepEqual(await verdictKeys(), [
      'rollout_guard_verdict_info{namespace="db",guard="pg",kind="StatefulSet",target="postgres",daemonset="",state="Healthy",cause="",owner=""}',
      'rollout_guard_verdict_info{namespace="gpu",guard="toolkit",kind="DaemonSet",target="toolkit",daemonset="toolkit",state="Stalled",cause="ImagePullFailure",owner="Revision"}',
    ]);
    m.setState('gpu', 'toolkit', ds('toolkit'), 'RolledBack');
    m.forgetGuard('db', 'pg');
    assert.deepEqual(await verdictKeys(), [
      'rollout_guard_verdict_info{namespace="gpu",guard="toolkit",kind="DaemonSet",target="toolkit",daemonset="toolkit",state="RolledBack",cause="",owner=""}',
    ]);
  });

  it('the state gauge names the guarded DaemonSet, and follows a guard pointed at another one', async () => {
    const m = new Metrics(false);
    m.setState('ns', 'policy-agent-x', ds('agent'), 'Healthy');
    let s = await scrape(m);
    assert.equal(
      s.get('rollout_guard_state{namespace="ns",guard="policy-agent-x",kind="DaemonSet",target="agent",daemonset="agent",state="Healthy"}'),
      1,
    );
    m.setState('ns', 'policy-agent-x', ds('agent-v2'), 'Progressing');
    s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes('target="agent"') || k.includes('daemonset="agent"')),
      [],
      'no series left under the old DaemonSet',
    );
    assert.equal(
      s.get(
        'rollout_guard_state{namespace="ns",guard="policy-agent-x",kind="DaemonSet",target="agent-v2",daemonset="agent-v2",state="Progressing"}',
      ),
      1,
    );
  });

  it("the undo result gauge: one series per result, 1 for the guard's latest; gone with the guard", async () => {
    const m = new Metrics(false);
    m.setState('ns', 'g1', ds('decoder'), 'RollingBack');
    m.setUndoResult('ns', 'g1', ds('decoder'), undefined);
    let s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.startsWith('rollout_guard_undo_result')),
      [],
      'no series before the first undo',
    );
    m.setUndoResult('ns', 'g1', ds('decoder'), 'Applied');
    m.setUndoResult('ns', 'g1', ds('decoder'), 'RollbackStalled');
    s = await scrape(m);
    assert.equal(
      s.get(
        'rollout_guard_undo_result{namespace="ns",guard="g1",kind="DaemonSet",target="decoder",daemonset="decoder",result="RollbackStalled"}',
      ),
      1,
    );
    assert.equal(
      s.get('rollout_guard_undo_result{namespace="ns",guard="g1",kind="DaemonSet",target="decoder",daemonset="decoder",result="Applied"}'),
      0,
    );
    m.forgetGuard('ns', 'g1');
    s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes('guard="g1"')),
      [],
    );
  });

  it('a StatefulSet guard: kind and target name it, daemonset is empty, on every series', async () => {
    const m = new Metrics(false);
    m.setState('db', 'pg', sts('postgres'), 'Stalled');
    m.setUndoResult('db', 'pg', sts('postgres'), 'Failed');
    m.countStall('db', 'pg', sts('postgres'), 'ImagePullFailure', 'Revision');
    m.countFailure('db', 'pg', sts('postgres'), 'CrashLoop');
    const s = await scrape(m);
    const labels = 'namespace="db",guard="pg",kind="StatefulSet",target="postgres",daemonset=""';
    assert.equal(s.get(`rollout_guard_state{${labels},state="Stalled"}`), 1);
    assert.equal(s.get(`rollout_guard_state{${labels},state="Healthy"}`), 0);
    assert.equal(s.get(`rollout_guard_undo_result{${labels},result="Failed"}`), 1);
    assert.equal(s.get(`rollout_guard_stalls_detected_total{${labels},cause="ImagePullFailure",owner="Revision"}`), 1);
    assert.equal(s.get(`rollout_guard_failures_detected_total{${labels},cause="CrashLoop"}`), 1);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes('guard="pg"') && !k.includes(labels)),
      [],
      'no series of the guard names the StatefulSet as a DaemonSet',
    );
  });

  it('a guard pointed from a DaemonSet to a StatefulSet of the same name moves its gauges; forgetting it removes every series', async () => {
    const m = new Metrics(false);
    const before = 'namespace="ns",guard="g",kind="DaemonSet",target="web",daemonset="web"';
    const after = 'namespace="ns",guard="g",kind="StatefulSet",target="web",daemonset=""';
    m.setState('ns', 'g', ds('web'), 'Stalled');
    m.setUndoResult('ns', 'g', ds('web'), 'RollbackStalled');
    m.countStall('ns', 'g', ds('web'), 'NodeNotReady', 'Node');
    m.setState('ns', 'g', sts('web'), 'Progressing');
    m.setUndoResult('ns', 'g', sts('web'), undefined);
    m.countFailure('ns', 'g', sts('web'), 'CrashLoop');
    m.setState('ns', 'other', sts('web'), 'Healthy');
    let s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes(before) && !k.startsWith('rollout_guard_stalls_detected_total')),
      [],
      'no gauge left under the DaemonSet: only its stall count stays, until the guard goes',
    );
    assert.equal(s.get(`rollout_guard_stalls_detected_total{${before},cause="NodeNotReady",owner="Node"}`), 1);
    assert.equal(s.get(`rollout_guard_state{${after},state="Progressing"}`), 1);
    assert.equal(s.get(`rollout_guard_state{${after},state="Stalled"}`), 0);
    assert.equal(s.get(`rollout_guard_failures_detected_total{${after},cause="CrashLoop"}`), 1);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.startsWith('rollout_guard_undo_result')),
      [],
      'the undo result went with the undo it described',
    );

    m.forgetGuard('ns', 'g');
    s = await scrape(m);
    assert.deepEqual(
      [...s.keys()].filter((k) => k.includes('guard="g"')),
      [],
    );
    assert.equal(
      s.get('rollout_guard_state{namespace="ns",guard="other",kind="StatefulSet",target="web",daemonset="",state="Healthy"}'),
      1,
      'another guard of the same target keeps its series',
    );
  });

  it('an API request is counted by verb, resource and code, and timed by verb and resource; a watch is counted, not timed', async () => {
    const m = new Metrics(false);
    m.recordRequest({ verb: 'PATCH', resource: 'rolloutguards/status', code: '200', seconds: 0.03125 });
    m.recordRequest({ verb: 'PATCH', resource: 'rolloutguards/status', code: '409', seconds: 0.25 });
    m.recordRequest({ verb: 'WATCH', resource: 'pods', code: '200' });
    const s = await scrape(m);
    assert.equal(s.get('rollout_guard_api_requests_total{verb="PATCH",resource="rolloutguards/status",code="200"}'), 1);
    assert.equal(s.get('rollout_guard_api_requests_total{verb="WATCH",resource="pods",code="200"}'), 1);
    assert.equal(s.get('rollout_guard_api_request_duration_seconds_count{verb="PATCH",resource="rolloutguards/status"}'), 2);
    assert.equal(s.get('rollout_guard_api_request_duration_seconds_sum{verb="PATCH",resource="rolloutguards/status"}'), 0.28125);
    assert.equal(s.get('rollout_guard_api_request_duration_seconds_bucket{le="0.05",verb="PATCH",resource="rolloutguards/status"}'), 1);
    assert.equal(
      [...s.keys()].some((k) => k.startsWith('rollout_guard_api_request_duration_seconds') && k.includes('WATCH')),
      false,
    );
  });
});
