/**
 * The writes to the operator's own objects against a small local HTTP API: guard status, policy status
 * and a generated guard's spec each go as a merge patch of what changed, with the resourceVersion they
 * were computed from; nothing is sent when nothing changed; the API server's 409 reaches the caller as a
 * Conflict port error.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { SlimGuard, SlimPolicy } from '../../src/api/objects.js';
import { isConflict } from '../../src/reconcile/portErrors.js';
import { PolicyWriter } from '../../src/k8s/policyWriter.js';
import { StatusWriter } from '../../src/k8s/statusWriter.js';
import { clientFor, listenLocal } from '../support/localApi.js';

interface Seen {
  method: string;
  path: string;
  contentType: string;
  body: Record<string, unknown>;
}

describe('StatusWriter and PolicyWriter', () => {
  const seen: Seen[] = [];
  let conflict = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: String(req.headers['content-type']),
        body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
      });
      res.writeHead(conflict ? 409 : 200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify(
          conflict
            ? { kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'the object has been modified' }
            : { metadata: { name: 'g', namespace: 'ns1', resourceVersion: '8' }, spec: { targetRef: { kind: 'DaemonSet', name: 'd' } } },
        ),
      );
    });
  });
  let status: StatusWriter;
  let policies: PolicyWriter;
  before(async () => {
    await listenLocal(server);
    status = new StatusWriter(clientFor(server));
    policies = new PolicyWriter(clientFor(server));
  });
  after(() => server.close());
  beforeEach(() => {
    seen.length = 0;
    conflict = false;
  });

  const guard: SlimGuard = {
    metadata: { name: 'g', namespace: 'ns1', resourceVersion: '7' },
    spec: { targetRef: { kind: 'DaemonSet', name: 'd' }, progressDeadlineSeconds: 30 },
    status: { state: 'Healthy', message: 'ok' },
  };
  const policy: SlimPolicy = { metadata: { name: 'p', resourceVersion: '70' }, spec: {}, status: { guards: 1, matchedDaemonSets: 1 } };

  it('guard status: the diff, on the resourceVersion it was decided from', async () => {
    const written = await status.write(guard, { state: 'Stalled', message: 'ok' });
    assert.equal(written?.metadata.resourceVersion, '8');
    assert.deepEqual(
      seen.map((s) => [s.method, s.path, s.contentType]),
      [['PATCH', '/apis/rolloutguard.dev/v1alpha1/namespaces/ns1/rolloutguards/g/status', 'application/merge-patch+json']],
    );
    assert.deepEqual(seen[0]!.body, { metadata: { resourceVersion: '7' }, status: { state: 'Stalled' } });
  });

  it('policy status: the diff, on the resourceVersion it was planned from', async () => {
    await policies.writeStatus(policy, { guards: 2, matchedDaemonSets: 1 });
    assert.deepEqual(
      seen.map((s) => [s.method, s.path]),
      [['PATCH', '/apis/rolloutguard.dev/v1alpha1/rolloutguardpolicies/p/status']],
    );
    assert.deepEqual(seen[0]!.body, { metadata: { resourceVersion: '70' }, status: { guards: 2 } });
  });

  it("a generated guard's spec: the diff, on the cached resourceVersion", async () => {
    await policies.patchGuardSpec(guard, { targetRef: { kind: 'DaemonSet', name: 'd' }, progressDeadlineSeconds: 60 });
    assert.deepEqual(
      seen.map((s) => [s.method, s.path]),
      [['PATCH', '/apis/rolloutguard.dev/v1alpha1/namespaces/ns1/rolloutguards/g']],
    );
    assert.deepEqual(seen[0]!.body, { metadata: { resourceVersion: '7' }, spec: { progressDeadlineSeconds: 60 } });
  });

  it('nothing changed: nothing is sent', async () => {
    assert.equal(await status.write(guard, { state: 'Healthy', message: 'ok' }), undefined);
    await policies.writeStatus(policy, { guards: 1, matchedDaemonSets: 1 });
    assert.equal(seen.length, 0);
  });

  it("the API server's 409 is a Conflict to reconcile", async () => {
    conflict = true;
    await assert.rejects(status.write(guard, { state: 'Stalled' }), isConflict);
    await assert.rejects(policies.writeStatus(policy, { guards: 3 }), isConflict);
  });
});
