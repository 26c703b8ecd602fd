/**
 * End to end: `rollout-guard dashboard` against the real control plane with the real operator, looked at
 * in a real browser (Debian's Chromium, test/support/browser.ts) as a person would: a DaemonSet rollout
 * that stalls on an image that cannot be pulled, its blocked node's cell marked with the cause, the
 * revisions counted, the timeline's stall and undo, and the page following the undo to the end without a
 * reload; a StatefulSet whose pod a person's revert left stuck; the list. The dashboard runs in this
 * process with an API client that records every request's verb, so the test sees that it only reads.
 * The command itself runs as a child process for what a user meets first: the URL it prints, on
 * 127.0.0.1, and a read-only server. Screenshots go to $RG_DASHBOARD_SHOTS when set (docs/images/ holds
 * the ones docs/dashboard.md shows, taken that way).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startDashboard, type RunningDashboard } from '../../src/cli/dashboard.js';
import { ApiClient } from '../../src/k8s/apiClient.js';
import { loadConnection } from '../../src/k8s/kubeConfig.js';
import { systemClock } from '../../src/runtime/clock.js';
import { openBrowser, type OpenBrowser } from '../support/browser.js';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubeconfigPath,
  kubectl,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { GuardReader } from '../support/guards.js';
import { OperatorProcess, ROOT, apply, guard, installCrds } from '../support/operator.js';
import { setStoreImage, settledSts, stsPods, storeStatefulSet } from '../support/statefulSets.js';

const MAIN = path.join(ROOT, 'dist/src/main.js');
const SHOTS = process.env.RG_DASHBOARD_SHOTS;

/**
 * The page's globals that the tests read, as functions run in the browser see them (this code is compiled
 * without the DOM's types). Functions, not strings: the page's content security policy forbids
 * evaluating strings in it. A function is sent to the page as its source, so it names `globalThis` itself.
 */
interface PageGlobals {
  notReloaded?: boolean;
}

describe('rollout-guard dashboard against the real control plane, in Chromium', () => {
  let ns: string;
  let dsPool: NodePool;
  let stsPool: NodePool;
  let op: OperatorProcess | undefined;
  let dash: RunningDashboard | undefined;
  let browser: OpenBrowser | undefined;
  let client: ApiClient | undefined;
  const verbs: string[] = [];
  const read = new GuardReader(undefined, () => op?.logs ?? []);
  const cleanups: Array<() => Promise<void>> = [];

  const shot = async (name: string): Promise<void> => {
    if (SHOTS) await browser!.page.screenshot({ path: path.join(SHOTS, `dashboard-${name}.png`), fullPage: true });
  };

  before(async () => {
    await ensureCluster();
    await installCrds();
    const n = await createNamespace('dash');
    ns = n.name;
    cleanups.push(n.cleanup);
    dsPool = await createNodePool(uniqueName('dashds'), 3);
    cleanups.push(dsPool.cleanup);
    stsPool = await createNodePool(uniqueName('dashsts'), 3);
    cleanups.push(stsPool.cleanup);
    op = await OperatorProcess.start({ namespaces: [ns] });
    const { kc } = loadConnection({ kubeconfig: kubeconfigPath() });
    client = ApiClient.fromKubeConfig(kc, { onRequest: (r) => verbs.push(`${r.verb} ${r.resource}`) });
    cleanups.push(() => Promise.resolve(client?.close()));
    dash = await startDashboard({ address: '127.0.0.1', port: 0, namespace: ns }, client, systemClock, pino({ level: 'warn' }));
    browser = await openBrowser();
  });

  after(async () => {
    await browser?.close();
    await dash?.stop();
    await op?.stop();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('a stalled DaemonSet: the blocked node marked with its cause, the revisions counted, the stall and the undo on the timeline, the end drawn without a reload', async () => {
    const { page } = browser!;
    await apply(decoderDaemonSet({ name: 'decoder', ns, pool: dsPool.name, image: 'registry.local/decoder:1' }));
    await read.availableOn(ns, 3);
    // Undo, but only 25 s after the stall: time for a person (and this test) to look at the stall first.
    await apply(
      guard('decoder', ns, 'decoder', {
        suspectAfterSeconds: 2,
        progressDeadlineSeconds: 4,
        onStall: { action: 'Undo', delaySeconds: 25 },
      }),
    );
    await read.waitGuard(ns, (g) => g.status?.state === 'Healthy', 'Healthy');

    await page.goto(`${dash!.url}#/${ns}/decoder`);
    await page.locator('[data-testid=state]', { hasText: 'Healthy' }).waitFor();
    await waitFor(async () => (await page.locator('.map .cell[data-state=ready]').count()) === 3, {
      timeoutMs: 30_000,
      describe: '3 Ready cells',
    });
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).notReloaded = true));

    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns });
    // kwok's stages fail the pull of any image named "broken" (cluster/stages.yaml).
    const blocked = page.locator('.map .cell[data-state=blocked]');
    await blocked.waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=state]', { hasText: 'Stalled' }).waitFor({ timeout: 60_000 });
    const node = await blocked.getAttribute('data-unit');
    assert.ok(node && dsPool.nodes.includes(node), `blocked unit ${node} is a node of the pool`);
    assert.equal(await blocked.getAttribute('data-cause'), 'ImagePullFailure');
    assert.match(
      (await blocked.getAttribute('aria-label')) ?? '',
      /^node \S+, revision 2, Blocked: (ImagePullBackOff|ErrImagePull), ImagePullFailure, Revision's fault$/,
    );
    // Its details on focus: the pod, the revision, the cause and the kubelet's message.
    await blocked.focus();
    const details = page.locator('.details');
    assert.equal(await details.getAttribute('data-unit'), node);
    assert.match((await details.textContent()) ?? '', /cause\s*ImagePullFailure/);
    assert.match((await details.textContent()) ?? '', /registry\.local\/decoder:2-broken/);
    // The revisions' counts, as the legend writes them.
    await waitFor(async () => /1 node, 0 ready, 1 blocked/.test((await page.locator('.legend [data-revision="2"]').textContent()) ?? ''), {
      timeoutMs: 30_000,
      describe: 'revision 2 counted',
    });
    assert.match((await page.locator('.legend [data-revision="1"]').textContent()) ?? '', /2 nodes, 2 ready/);
    assert.equal(await page.locator('.legend [data-state=blocked] .state-count').textContent(), '1');
    await page.locator('.timeline [data-reason=RolloutStalled]').first().waitFor({ timeout: 30_000 });
    assert.match(
      (await page.locator('.commands').textContent()) ?? '',
      new RegExp(`kubectl rollout undo daemonset/decoder -n ${ns} --to-revision=1`),
    );
    await shot('stalled');

    // The undo, then its end, drawn as they happen.
    await page.locator('.timeline [data-reason=UndoStarted]').first().waitFor({ timeout: 90_000 });
    await page.locator('[data-testid=state]', { hasText: 'RolledBack' }).waitFor({ timeout: 90_000 });
    await waitFor(async () => (await page.locator('.map .cell[data-state=ready]').count()) === 3 && (await blocked.count()) === 0, {
      timeoutMs: 60_000,
      describe: 'every node Ready again on the map',
    });
    await page.locator('.timeline [data-reason=UndoComplete]').first().waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).notReloaded), true, 'the same page, never reloaded');
    assert.match((await page.locator('.last-undo').textContent()) ?? '', /Last undo Complete/);
    await shot('rolledback');
  });

  it("a StatefulSet a person's revert left stuck: its ordinal marked stuck, the others Ready", async () => {
    const { page } = browser!;
    await apply(storeStatefulSet({ ns, pool: stsPool.name }));
    await settledSts(ns);
    const spec = {
      suspectAfterSeconds: 6,
      progressDeadlineSeconds: 15,
      onStall: { action: 'Report' },
      targetRef: { kind: 'StatefulSet', name: 'store' },
    };
    await apply(guard('store', ns, 'store', spec));
    await read.waitGuard(ns, (g) => g.status?.state === 'Healthy', 'Healthy', 90_000, 'store');
    await setStoreImage(ns, 'registry.local/store:2-broken');
    await waitFor(async () => /ImagePullBackOff|ErrImagePull/.test((await stsPods(ns)).get('store-2')?.waiting ?? ''), {
      timeoutMs: 60_000,
      describe: 'store-2 failing to pull',
    });
    await kubectl(['rollout', 'undo', 'statefulset/store'], { ns });
    await read.waitGuard(ns, (g) => /still on .* and not Ready/.test(g.status?.message ?? ''), 'the stuck pod named', 90_000, 'store');

    await page.goto(`${dash!.url}#/${ns}/store`);
    const stuck = page.locator('.map .cell[data-unit=store-2]');
    await waitFor(async () => (await stuck.getAttribute('data-state')) === 'stuck', {
      timeoutMs: 30_000,
      describe: 'store-2 marked stuck',
    });
    assert.match((await stuck.getAttribute('aria-label')) ?? '', /^ordinal store-2, revision \d+, Stuck after revert/);
    for (const ok of ['store-0', 'store-1'])
      assert.equal(await page.locator(`.map .cell[data-unit=${ok}]`).getAttribute('data-state'), 'ready');
    assert.match((await page.locator('.status-message').textContent()) ?? '', /kubectl delete pod store-2/);
    await stuck.focus();
    assert.match((await page.locator('.details').textContent()) ?? '', /node\s*\S+/, 'the node the ordinal runs on');
    await shot('statefulset');
  });

  it('the list: both guards with kind, target, state and cause; filtered and sorted', async () => {
    const { page } = browser!;
    await page.goto(`${dash!.url}#/`);
    const rows = page.locator('table.guards tbody tr');
    await waitFor(async () => (await rows.count()) === 2, { timeoutMs: 30_000, describe: 'two guards listed' });
    const decoder = page.locator(`tr[data-guard="${ns}/decoder"]`);
    assert.match((await decoder.textContent()) ?? '', /DaemonSet.*decoder.*RolledBack/);
    assert.match((await page.locator(`tr[data-guard="${ns}/store"]`).textContent()) ?? '', /StatefulSet.*store/);
    await page.getByRole('button', { name: 'Kind' }).click();
    await page.getByRole('button', { name: /Kind/ }).click();
    assert.equal(await rows.first().getAttribute('data-guard'), `${ns}/store`, 'Kind descending: StatefulSet first');
    await page.getByLabel('Filter').fill('statefulset');
    await waitFor(async () => (await rows.count()) === 1, { timeoutMs: 5_000, describe: 'the filter keeps one guard' });
    await page.getByLabel('Filter').fill('');
    await shot('list');
    await page.locator(`tr[data-guard="${ns}/decoder"] a`).click();
    await page.locator('.map .cell').first().waitFor();
  });

  it('one watch per guard viewed, shared, closed when the last viewer leaves; and nothing but reads', async () => {
    const { context } = browser!;
    const hub = dash!.hub;
    const extra = await context.newPage();
    await extra.goto(`${dash!.url}#/${ns}/decoder`);
    await extra.locator('.map .cell').first().waitFor();
    assert.equal(hub.watchedGuards, 1, 'two browsers on one guard share one watch');
    await extra.close();
    await browser!.page.goto(`${dash!.url}#/`);
    await waitFor(() => hub.watchedGuards === 0, { timeoutMs: 10_000, describe: 'the watch closed when its viewers left' });
    const writes = verbs.filter((v) => !/^(GET|WATCH) /.test(v));
    assert.deepEqual(writes, [], 'the dashboard only reads');
    assert.ok(verbs.some((v) => v.startsWith('WATCH rolloutguards')) && verbs.some((v) => v.startsWith('WATCH events')), verbs.join(', '));
  });

  it('the command prints its URL on 127.0.0.1, serves the list as JSON, refuses every method but GET and a foreign Host, and stops on SIGINT', async () => {
    const child = spawn(process.execPath, [MAIN, 'dashboard', '-n', ns, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: kubeconfigPath() },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const url = await waitFor(() => /(http:\/\/\S+\/) /.exec(out)?.[1], {
        timeoutMs: 30_000,
        describe: `the URL printed (stderr: ${err})`,
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      assert.match(out, new RegExp(`namespace ${ns}, read-only`));
      const list = (await (await fetch(`${url}api/guards`)).json()) as { guards: Array<{ name: string }> };
      assert.deepEqual(list.guards.map((g) => g.name).sort(), ['decoder', 'store']);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const r = await fetch(`${url}api/guards`, { method });
        assert.equal(r.status, 405, method);
        assert.equal(r.headers.get('allow'), 'GET');
      }
      const page = await fetch(url);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.match(await page.text(), /<div id="app">/);
      const rebound = await new Promise<number | undefined>((resolve) => {
        const u = new URL(url);
        http
          .get({ host: u.hostname, port: u.port, path: '/api/guards', headers: { host: 'attacker.example:80' } }, (res) => {
            res.resume();
            resolve(res.statusCode);
          })
          .on('error', () => resolve(undefined));
      });
      assert.equal(rebound, 403, 'a foreign Host header is refused');
    } finally {
      child.kill('SIGINT');
    }
    assert.equal(await exited, 0, err);
  });

  it('a guard opened before it exists: a note, then its map once it is created, without a reload; -A lists it with the others', async () => {
    const { page } = browser!;
    await apply(decoderDaemonSet({ name: 'late', ns, pool: dsPool.name, image: 'registry.local/decoder:1' }));
    await page.goto(`${dash!.url}#/${ns}/late`);
    const note = page.locator('.note');
    await note.waitFor({ timeout: 30_000 });
    assert.match((await note.textContent()) ?? '', /RolloutGuard late not found/);
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).notReloaded = true));
    await apply(guard('late', ns, 'late', { suspectAfterSeconds: 6, progressDeadlineSeconds: 15, onStall: { action: 'Report' } }));
    await waitFor(async () => (await page.locator('.map .cell[data-state=ready]').count()) === 3, {
      timeoutMs: 60_000,
      describe: "the late guard's 3 Ready nodes drawn in the page that waited for it",
    });
    assert.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).notReloaded), true, 'the same page, never reloaded');
    assert.equal(await note.count(), 0, 'the note gone');

    // -A: every namespace's guards, each with its namespace.
    const all = await startDashboard(
      { address: '127.0.0.1', port: 0, namespace: undefined },
      client!,
      systemClock,
      pino({ level: 'warn' }),
    );
    try {
      const list = (await (await fetch(`${all.url}api/guards`)).json()) as {
        namespace?: string;
        guards: Array<{ namespace: string; name: string }>;
      };
      assert.equal(list.namespace, undefined, 'no one namespace shown');
      const ours = list.guards.filter((g) => g.namespace === ns).map((g) => g.name);
      assert.deepEqual(ours, ['decoder', 'late', 'store']);
    } finally {
      await all.stop();
    }
  });
});
