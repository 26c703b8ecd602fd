/**
 * `rollout-guard check`: argument parsing and the end condition, without a cluster. The end-to-end
 * behaviour (real DaemonSets, exit codes of the real CLI) is in test/e2e/check.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration } from '../../src/cli/args.js';
import { parseCheckArgs, verdictOf } from '../../src/cli/check.js';
import { ExitCode } from '../../src/cli/command.js';
import { decide } from '../../src/domain/decide/decide.js';
import { UsageError } from '../../src/runtime/config.js';
import { HASH, T0, imagePullPod, missingObs, node, nodesOn, pod, policy, rev, sec, targetObs } from '../support/fixtures.js';

describe('parseDuration', () => {
  it('reads plain seconds and single units', () => {
    assert.equal(parseDuration('--deadline', '90'), 90);
    assert.equal(parseDuration('--deadline', '90s'), 90);
    assert.equal(parseDuration('--deadline', '5m'), 300);
    assert.equal(parseDuration('--deadline', '1h'), 3600);
    assert.equal(parseDuration('--deadline', ' 8s '), 8);
  });

  it('reads kubectl/Go style compounds in descending units', () => {
    assert.equal(parseDuration('--deadline', '1m30s'), 90);
    assert.equal(parseDuration('--deadline', '1h5m'), 3900);
    assert.equal(parseDuration('--deadline', '2h0m10s'), 7210);
  });

  it('rejects what it cannot read exactly, naming the flag', () => {
    for (const bad of ['', 'm', '5x', '1.5m', '-5s', '5 m', '30s1m', '1m1m', '5ms']) {
      assert.throws(
        () => parseDuration('--suspect', bad),
        (e: unknown) => e instanceof UsageError && /--suspect/.test(e.message),
        bad,
      );
    }
  });
});

describe('parseCheckArgs', () => {
  it("defaults: no namespace (the kubeconfig context's, else default, once loaded), deadline 10m, suspect a fifth of it, text output", () => {
    assert.deepEqual(parseCheckArgs(['ds/decoder']), {
      kind: 'DaemonSet',
      name: 'decoder',
      deadlineSeconds: 600,
      suspectSeconds: 120,
      output: 'text',
    });
  });

  it('reads every flag, in both --flag value and --flag=value forms', () => {
    const a = parseCheckArgs(['ds/decoder', '-n', 'prod', '--deadline', '8s', '--suspect=3s', '-o', 'json', '--kubeconfig=/tmp/kc']);
    assert.deepEqual(a, {
      kind: 'DaemonSet',
      name: 'decoder',
      namespace: 'prod',
      deadlineSeconds: 8,
      suspectSeconds: 3,
      output: 'json',
      kubeconfig: '/tmp/kc',
    });
    const b = parseCheckArgs(['--namespace=prod', '--output=text', '--deadline=2m', 'daemonset/decoder']);
    assert.deepEqual(b, {
      kind: 'DaemonSet',
      name: 'decoder',
      namespace: 'prod',
      deadlineSeconds: 120,
      suspectSeconds: 24,
      output: 'text',
    });
    const c = parseCheckArgs(['ds/decoder', '--context', 'staging', '--cluster=east', '--user', 'ci', '--kubeconfig', '/a:/b']);
    assert.deepEqual(c, {
      kind: 'DaemonSet',
      name: 'decoder',
      deadlineSeconds: 600,
      suspectSeconds: 120,
      output: 'text',
      context: 'staging',
      cluster: 'east',
      user: 'ci',
      kubeconfig: '/a:/b',
    });
  });

  it('accepts the resource spellings kubectl accepts', () => {
    for (const t of ['ds/x', 'daemonset/x', 'daemonsets/x', 'daemonset.apps/x', 'DaemonSet/x', 'daemonsets.apps/x']) {
      assert.equal(parseCheckArgs([t]).name, 'x', t);
    }
    assert.equal(parseCheckArgs(['ds/node-exporter.v2']).name, 'node-exporter.v2');
    for (const t of ['sts/x', 'statefulset/x', 'statefulsets.apps/x', 'StatefulSet/x']) {
      const o = parseCheckArgs([t]);
      assert.deepEqual([o.kind, o.name], ['StatefulSet', 'x'], t);
    }
    for (const t of ['deploy/x', 'deployment/x', 'deployments.apps/x', 'Deployment/x']) {
      const o = parseCheckArgs([t]);
      assert.deepEqual([o.kind, o.name], ['Deployment', 'x'], t);
    }
    assert.equal(parseCheckArgs(['ds/x']).kind, 'DaemonSet');
  });

  it('a short deadline gets a suspect time of at least 1s', () => {
    assert.equal(parseCheckArgs(['ds/x', '--deadline', '2s']).suspectSeconds, 1);
  });

  const usage: Array<[string, string[], RegExp]> = [
    ['no target', [], /needs a target/],
    ['two targets', ['ds/a', 'ds/b'], /only one target/],
    ['a bare name', ['decoder'], /ds\/NAME/],
    ['another kind', ['job/decoder'], /ds\/NAME/],
    ['an uppercase name', ['ds/Decoder'], /lowercase/],
    ['an invalid name', ['ds/-x'], /ds\/NAME/],
    ['an unknown flag', ['ds/x', '--wait'], /unknown flag --wait/],
    ['a flag without value', ['ds/x', '-n'], /-n needs a value/],
    ['a bad duration', ['ds/x', '--deadline', 'soon'], /--deadline wants a duration/],
    ['a deadline under 2s', ['ds/x', '--deadline', '1s'], /at least 2s/],
    ['suspect not below deadline', ['ds/x', '--deadline', '10s', '--suspect', '10s'], /shorter than --deadline/],
    ['an unknown output', ['ds/x', '-o', 'xml'], /text, json or yaml/],
  ];
  for (const [what, args, re] of usage) {
    it(`usage error: ${what}`, () => {
      assert.throws(
        () => parseCheckArgs(args),
        (e: unknown) => e instanceof UsageError && re.test(e.message),
      );
    });
  }
});

describe('verdictOf', () => {
  const deadline = sec(20);
  const p = policy({ suspectAfterSeconds: 5, progressDeadlineSeconds: 20 });

  it('a missing DaemonSet is exit 4, OnDelete exit 5', () => {
    const m = missingObs();
    assert.equal(verdictOf(m, decide(m, {}, p, T0).status, 0, deadline)?.code, ExitCode.NotFound);
    const od = targetObs({ target: { strategy: 'OnDelete' }, nodes: nodesOn(HASH.A) });
    assert.equal(verdictOf(od, decide(od, {}, p, T0).status, 0, deadline)?.code, ExitCode.NotGuardable);
  });

  it('a finished rollout is exit 0', () => {
    const o = targetObs({ nodes: nodesOn(HASH.A) });
    const v = verdictOf(o, decide(o, {}, p, T0).status, 0, deadline);
    assert.equal(v?.code, ExitCode.Ok);
    assert.match(v?.message ?? '', /3\/3 nodes available/);
  });

  it('right after `kubectl set image` (generation not yet observed) it keeps waiting instead of reporting the old template complete', () => {
    // The controller has not seen generation 2: every counter still describes revision 1, all good.
    const o = targetObs({ target: { generation: 2, observedGeneration: 1 }, nodes: nodesOn(HASH.A) });
    const s = decide(o, {}, p, T0).status;
    assert.equal(s.state, 'Healthy', 'decide alone would call this healthy, which is why check needs the rule');
    assert.equal(verdictOf(o, s, 0, deadline), undefined);
    assert.equal(verdictOf(o, s, sec(19), deadline), undefined);
    const v = verdictOf(o, s, deadline, deadline);
    assert.equal(v?.code, ExitCode.Stalled);
    assert.match(v?.message ?? '', /has not observed generation 2 for 20s/);
  });

  it('a rollout in flight keeps waiting; once decide says Stalled it is exit 3 with the cause in the message', () => {
    const revisions = [rev(HASH.A, 1), rev(HASH.B, 2)];
    const nodes = [
      node('node-1', [pod({ hash: HASH.A })]),
      node('node-2', [imagePullPod(HASH.B)]),
      node('node-3', [pod({ hash: HASH.A })]),
    ];
    const o = targetObs({ target: { generation: 2, observedGeneration: 2, updated: 1, ready: 2, available: 2 }, revisions, nodes });
    const first = decide(o, {}, p, T0);
    assert.equal(verdictOf(o, first.status, 0, deadline), undefined);
    const later = decide(o, first.status, p, T0 + deadline + 1);
    assert.equal(later.status.state, 'Stalled');
    const v = verdictOf(o, later.status, 0, deadline);
    assert.equal(v?.code, ExitCode.Stalled);
    assert.match(v?.message ?? '', /node-2 ImagePullBackOff/);
    assert.match(v?.message ?? '', /Cause ImagePullFailure/);
  });

  it('a DaemonSet matching no node is a failure, not a success', () => {
    const o = targetObs({ target: { desired: 0, current: 0, updated: 0, ready: 0, available: 0 } });
    assert.equal(verdictOf(o, decide(o, {}, p, T0).status, 0, deadline)?.code, ExitCode.Stalled);
  });

  it('a revision that crashes after starting on two Ready nodes is exit 3 at once, long before the deadline', () => {
    const revisions = [rev(HASH.A, 1), rev(HASH.B, 2)];
    const crashed = (): ReturnType<typeof pod> =>
      pod({
        hash: HASH.B,
        restartCount: 1,
        lastTermination: { container: 'decoder', reason: 'Error', exitCode: 1, at: new Date(T0).toISOString() },
      });
    const nodes = [node('node-1', [crashed()]), node('node-2', [crashed()]), node('node-3', [pod({ hash: HASH.A })])];
    const o = targetObs({ target: { generation: 2, observedGeneration: 2, updated: 2, ready: 3, available: 3 }, revisions, nodes });
    const s = decide(o, {}, p, T0).status;
    assert.equal(s.state, 'Failed');
    const v = verdictOf(o, s, 0, deadline);
    assert.equal(v?.code, ExitCode.Stalled);
    assert.equal(v?.verdict, 'revision failed');
  });
});
