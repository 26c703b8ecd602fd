/**
 * The Events decide plans on transitions, built one way for every phase.
 */
import { truncate } from '../messages.js';
import { EventAction } from '../../api/reasons.js';
import type { PlannedEvent } from '../../api/types.js';

/** An Event; `onTarget` mirrors it on the DaemonSet. Notes are cut to the API server's 1 kB. */
export function event(
  type: PlannedEvent['type'],
  reason: string,
  note: string,
  onTarget = true,
  action: string = EventAction.Observe,
): PlannedEvent {
  return { type, reason, note: truncate(note, 1000), action, onTarget };
}
