/**
 * The fixtures of the `rollout-guard get` view and render tests: the classic stall, judged by the real
 * decide, and the view of an observation as `get ds/NAME` builds it.
 */
import type { GuardStatus } from '../../src/api/types.js';
import { buildView, type GetView } from '../../src/cli/getView.js';
import { decide } from '../../src/domain/decide/decide.js';
import type { Observation } from '../../src/domain/observation.js';
import { DS_NAME, HASH, T0, imagePullPod, node, pod, policy, rev, sec, targetObs } from './fixtures.js';

export const p = policy({ suspectAfterSeconds: 30, progressDeadlineSeconds: 60 });

/** The classic stall: revision 2 cannot pull its image on node-2, node-1 and node-3 still run revision 1. */
export function classicStall(): Observation {
  return targetObs({
    target: { generation: 2, observedGeneration: 2, updated: 1, ready: 2, available: 2, images: [`registry.example/decoder:${HASH.B}`] },
    revisions: [rev(HASH.B, 2), rev(HASH.A, 1)],
    nodes: [node('node-3', [pod({ hash: HASH.A })]), node('node-2', [imagePullPod(HASH.B)]), node('node-1', [pod({ hash: HASH.A })])],
  });
}

/** decide over two passes a deadline apart: the second one is Stalled. */
export function stalled(obs: Observation): GuardStatus {
  const first = decide(obs, {}, p, T0).status;
  return decide(obs, first, p, T0 + sec(61)).status;
}

/** The view of `get ds/decoder -n gpu-system` a deadline after T0, `extra` overriding its arguments. */
export function view(obs: Observation, status: GuardStatus, extra: Partial<Parameters<typeof buildView>[0]> = {}): GetView {
  return buildView({
    kind: 'DaemonSet',
    targetKind: 'DaemonSet',
    namespace: 'gpu-system',
    name: DS_NAME,
    obs,
    status,
    now: T0 + sec(61),
    ...extra,
  });
}
