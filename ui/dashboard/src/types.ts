// The JSON the server sends, typed by the very modules that build it (src/cli/dashboard*.ts): the page
// and the server cannot disagree on a field without the build failing.
export type { CellState, GuardDetail, MapCell, RevisionGroup } from '../../../src/cli/dashboardView.js';
export type { GuardList, GuardRow } from '../../../src/cli/dashboardList.js';
export type { TimelineEntry } from '../../../src/cli/dashboardTimeline.js';
