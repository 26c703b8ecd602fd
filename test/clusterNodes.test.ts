/**
 * When a kwok node counts as ready for workloads: Ready=True is not enough while the not-ready taint the
 * API server put on it at creation is still there, since a DaemonSet leaves such a node out of DESIRED.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeUsable } from '../cluster/nodes.js';
import { NOT_READY_TAINT, UNREACHABLE_TAINT } from '../src/api/names.js';

const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };

describe('nodeUsable', () => {
  const rows: Array<[string, Parameters<typeof nodeUsable>[0], boolean]> = [
    ['Ready, no taint', ready, true],
    [
      'Ready, a taint of its own (not a condition taint)',
      { ...ready, spec: { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] } },
      true,
    ],
    ['Ready, the not-ready taint not lifted yet', { ...ready, spec: { taints: [{ key: NOT_READY_TAINT, effect: 'NoSchedule' }] } }, false],
    [
      'Ready, the unreachable taint not lifted yet',
      { ...ready, spec: { taints: [{ key: UNREACHABLE_TAINT, effect: 'NoSchedule' }] } },
      false,
    ],
    [
      'Ready, the unreachable NoExecute taint not lifted yet',
      { ...ready, spec: { taints: [{ key: UNREACHABLE_TAINT, effect: 'NoExecute' }] } },
      false,
    ],
    ['Ready False', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, false],
    ['Ready Unknown', { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }, false],
    ['no conditions yet (kwok has not initialised it)', { status: {} }, false],
  ];
  for (const [name, node, want] of rows) it(name, () => assert.equal(nodeUsable(node), want));
});
