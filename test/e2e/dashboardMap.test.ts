/**
 * The dashboard's page in the real browser (Debian's Chromium, test/support/browser.ts) with no cluster:
 * the built page served by the real server from a fixed feed. A map of 5,000 nodes is drawn whole,
 * its legend adds up, the keyboard walks it; a map of 3 names its nodes. The time the browser took to
 * draw the 5,000 cells (from the detail's arrival to the first frame painted after it, read in the page
 * with performance.now()) is printed as a diagnostic and written to $RG_DASHBOARD_MEASURE if set; it is
 * measured, not asserted: the figure in docs/performance.md comes from such a run.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { STATIC_DIR } from '../../src/cli/dashboard.js';
import { startServer } from '../../src/cli/dashboardServer.js';
import { openBrowser, type OpenBrowser } from '../support/browser.js';
import { FixedFeed, bigDetail } from '../support/dashboardFixtures.js';

/**
 * The page's globals that the tests read, as functions run in the browser see them (this code is compiled
 * without the DOM's types). Functions, not strings: the page's content security policy forbids
 * evaluating strings in it. A function is sent to the page as its source, so it names `globalThis` itself.
 */
interface PageGlobals {
  __dashboardDraw?: { cells: number; ms: number };
  marker?: number;
  document: { activeElement: { classList: { contains(c: string): boolean }; getAttribute(n: string): string | null } | null };
}

describe('the dashboard page in Chromium, from a fixed feed', () => {
  let browser: OpenBrowser;
  const servers: Array<{ close: () => Promise<void> }> = [];

  before(async () => {
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
  });

  const serve = async (feed: FixedFeed): Promise<string> => {
    const s = await startServer(feed, { address: '127.0.0.1', port: 0, staticDir: STATIC_DIR });
    servers.push(s);
    return s.url;
  };

  it('draws a map of 5,000 nodes whole, its legend adding up, and the keyboard walks it', async (t) => {
    const detail = bigDetail(5000);
    const url = await serve(new FixedFeed(detail));
    const { page } = browser;
    await page.goto(`${url}#/bench/decoder`);
    const draw = await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__dashboardDraw).then((h) => h.jsonValue());
    assert.ok(draw);
    assert.equal(draw.cells, 5000);
    assert.equal(await page.locator('.map .cell').count(), 5000);
    for (const [state, n] of Object.entries(detail.counts))
      assert.equal(await page.locator(`.legend [data-state=${state}] .state-count`).textContent(), String(n), state);
    assert.equal(await page.locator('.map .cell[data-state=blocked]').count(), detail.counts.blocked);
    // One screen: the whole map fits in 1440×1000 pixels beside the timeline, below the header.
    const box = await page.locator('.map').boundingBox();
    assert.ok(box && box.y + box.height <= 1000, `map ${JSON.stringify(box)}`);

    // Keyboard: Tab reaches the map as one stop; arrows move; the details follow the focus.
    // Tab from the top of the page reaches the map after the few links before it.
    let presses = 0;
    while (
      !(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.classList.contains('cell'))) &&
      presses < 20
    ) {
      await page.keyboard.press('Tab');
      presses++;
    }
    assert.ok(presses < 20, 'Tab reaches the map');
    const first = await page.locator('.details').getAttribute('data-unit');
    await page.keyboard.press('ArrowRight');
    const second = await page.locator('.details').getAttribute('data-unit');
    assert.notEqual(second, first);
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('data-unit')),
      second,
    );
    await page.keyboard.press('ArrowDown');
    const below = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('data-unit'));
    assert.ok(below && below !== second, 'ArrowDown moves to the row below');
    assert.equal(await page.locator('.map .cell[tabindex="0"]').count(), 1, 'one Tab stop');

    t.diagnostic(`5,000-cell map drawn in ${draw.ms.toFixed(1)} ms (Chromium ${browser.context.browser()?.version() ?? ''})`);
    if (process.env.RG_DASHBOARD_MEASURE)
      await writeFile(process.env.RG_DASHBOARD_MEASURE, JSON.stringify({ cells: 5000, ms: draw.ms }) + '\n');
    if (process.env.RG_DASHBOARD_SHOTS) await page.screenshot({ path: `${process.env.RG_DASHBOARD_SHOTS}/dashboard-5000.png` });
  });

  it('a map of 3 nodes names each node in its cell, and a pushed change is drawn without a reload', async () => {
    const feed = new FixedFeed(bigDetail(3));
    const url = await serve(feed);
    const { page } = browser;
    await page.goto(`${url}#/bench/decoder`);
    await page.locator('.map .cell.large').first().waitFor();
    assert.deepEqual(
      await page.locator('.map .cell .name').allTextContents(),
      feed.detail.cells.map((c) => c.unit),
    );
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).marker = 1));
    feed.push({ ...feed.detail, state: 'RolledBack', cells: feed.detail.cells.map((c) => ({ ...c, state: 'ready' as const })) });
    await page.locator('[data-testid=state]', { hasText: 'RolledBack' }).waitFor();
    assert.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).marker), 1, 'the same page, not reloaded');
  });
});
