/**
 * The operator's diagnostics channels (`node:diagnostics_channel`): points in its work where an observer
 * in the same process may look, or act (a test preloads a subscriber with `node --import` that exits
 * there, as a crash at that point would). With no subscriber a publish is a flag check: the message is
 * built only when someone listens.
 *
 * @module
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { Announcement } from '../api/types.js';
import type { UndoOutcome } from '../domain/undo.js';

/** The channel names, one per point. */
export const DIAGNOSTICS_CHANNELS = {
  /** A guard's status was written; the announcements it added are not sent as Events yet. */
  beforeAnnounce: 'rollout-guard:before-announce',
  /** An undo patch returned; its outcome is not recorded in the guard's status yet. */
  undoPatched: 'rollout-guard:undo-patched',
} as const;

export type DiagnosticsPoint = keyof typeof DIAGNOSTICS_CHANNELS;

/** What each channel carries. */
export interface DiagnosticsMessages {
  beforeAnnounce: {
    /** The guard's namespace and name. */
    namespace: string;
    name: string;
    /** The announcements this write added to status (not in the status it replaced). */
    announcements: Announcement[];
  };
  undoPatched: {
    /** The DaemonSet's namespace and name. */
    namespace: string;
    name: string;
    outcome: UndoOutcome;
  };
}

const channels = {
  beforeAnnounce: diagnostics_channel.channel(DIAGNOSTICS_CHANNELS.beforeAnnounce),
  undoPatched: diagnostics_channel.channel(DIAGNOSTICS_CHANNELS.undoPatched),
} satisfies Record<DiagnosticsPoint, diagnostics_channel.Channel>;

/** Publishes at `point`; `message` is called only when the channel has a subscriber. */
export function publish<P extends DiagnosticsPoint>(point: P, message: () => DiagnosticsMessages[P]): void {
  const channel = channels[point];
  if (channel.hasSubscribers) channel.publish(message());
}

/** The announcements of `next` that `previous` did not have (by id). */
export function addedAnnouncements(
  previous: readonly Announcement[] | undefined,
  next: readonly Announcement[] | undefined,
): Announcement[] {
  return (next ?? []).filter((a) => !previous?.some((p) => p.id === a.id));
}
