// Colours a colour-blind person can tell apart: the Okabe–Ito palette (Okabe and Ito, "Color Universal
// Design", 2008). Colour tells revisions apart; a state is never told by colour alone: each has a pattern,
// a letter and its name in words (the legend, the cell's label, the details).
import type { CellState } from './types.js';

/** Revision colours, newest revision first; vermillion is kept for what is wrong. */
export const REVISION_COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#F0E442', '#999999'];

/** A revision's colour by its index in the detail's revisions (-1: no pod). */
export function revisionColour(group: number): string {
  if (group < 0) return 'transparent';
  return REVISION_COLOURS[group % REVISION_COLOURS.length]!;
}

/** The letter a cell shows, and the words for each state. */
export const STATE_TEXT: Readonly<Record<CellState, { letter: string; words: string; describe: string }>> = {
  ready: { letter: 'R', words: 'Ready', describe: 'Ready on its revision' },
  progressing: { letter: 'P', words: 'Progressing', describe: 'not Ready yet, not blamed' },
  blocked: { letter: 'B', words: 'Blocked', describe: 'the rollout waits for it, with its cause' },
  stuck: { letter: 'S', words: 'Stuck after revert', describe: 'left not Ready on the undone revision' },
  empty: { letter: 'E', words: 'Empty', describe: 'should run a pod and has none' },
};
