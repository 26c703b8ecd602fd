/** The API paths the operator requests, built in one place: core and named groups, namespaced or not, names encoded. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as p from '../../src/k8s/apiPaths.js';

describe('apiPaths', () => {
  const cases: Array<[string, string]> = [
    [p.guardsPath('ns1'), '/apis/rolloutguard.dev/v1alpha1/namespaces/ns1/rolloutguards'],
    [p.guardsPath('ns1', 'g'), '/apis/rolloutguard.dev/v1alpha1/namespaces/ns1/rolloutguards/g'],
    [p.guardsPath(), '/apis/rolloutguard.dev/v1alpha1/rolloutguards'],
    [p.policiesPath(), '/apis/rolloutguard.dev/v1alpha1/rolloutguardpolicies'],
    [p.policiesPath('all'), '/apis/rolloutguard.dev/v1alpha1/rolloutguardpolicies/all'],
    [p.daemonSetsPath('ns1', 'decoder'), '/apis/apps/v1/namespaces/ns1/daemonsets/decoder'],
    [p.daemonSetsPath(), '/apis/apps/v1/daemonsets'],
    [p.controllerRevisionsPath('ns1', 'decoder-aaa'), '/apis/apps/v1/namespaces/ns1/controllerrevisions/decoder-aaa'],
    [p.podsPath('ns1'), '/api/v1/namespaces/ns1/pods'],
    [p.nodesPath(), '/api/v1/nodes'],
    [p.namespacesPath(), '/api/v1/namespaces'],
    [p.coreEventsPath('ns1'), '/api/v1/namespaces/ns1/events'],
    [p.coreEventsPath(), '/api/v1/events'],
    [p.eventsPath('ns1'), '/apis/events.k8s.io/v1/namespaces/ns1/events'],
    [p.leasesPath('kube-system'), '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases'],
    [p.TOKEN_REVIEWS_PATH, '/apis/authentication.k8s.io/v1/tokenreviews'],
    [p.SUBJECT_ACCESS_REVIEWS_PATH, '/apis/authorization.k8s.io/v1/subjectaccessreviews'],
    [p.guardsPath('a b', 'x/y'), '/apis/rolloutguard.dev/v1alpha1/namespaces/a%20b/rolloutguards/x%2Fy'],
  ];
  for (const [got, want] of cases) it(want, () => assert.equal(got, want));
});
