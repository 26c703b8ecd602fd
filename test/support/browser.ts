/**
 * The real browser the dashboard's tests drive: Debian's Chromium (/usr/bin/chromium, installed by
 * scripts/browser.sh, which cluster/build.sh runs), headless, through playwright-core, which never
 * downloads a browser of its own. Each launch gets a fresh profile directory. Without the background
 * networking switches Chromium reaches out to its update and sync services, which this closed network
 * refuses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.RG_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A launched browser with one page, and how to close both (and remove the profile). */
export interface OpenBrowser {
  context: BrowserContext;
  page: Page;
  close: () => Promise<void>;
}

/** Launches Chromium with a fresh profile and opens one page of `width`×`height`. */
export async function openBrowser(viewport = { width: 1440, height: 1000 }): Promise<OpenBrowser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'rg-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export type { Browser, Page };
