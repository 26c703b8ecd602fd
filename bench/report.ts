/**
 * Human-readable output of a benchmark run: fixed-width tables for stdout and a hand-written SVG with
 * the curves (no plotting dependency: a few polylines and tick labels are all it takes).
 */
import type { StatefulSetSizeResult } from './statefulSets.js';
import { deploymentLines, type DeploymentSizeResult } from './deployments.js';
import type { SlowSample, TailResult } from './tail.js';
import type { MicroResult } from './micro.js';
import type { SizeResult } from './scenario.js';
import type { Summary } from './stats.js';

/** The whole results file. */
export interface BenchResults {
  schema: 'rollout-guard-bench/v1';
  startedAt: string;
  finishedAt: string;
  wallSeconds: number;
  machine: { host: string; nproc: number; memoryGiB: number; cpuModel: string; os: string; node: string };
  versions: Record<string, string>;
  params: Record<string, unknown>;
  micro: MicroResult[];
  sizes: SizeResult[];
  /** The StatefulSet sizes (bench/statefulSets.ts), when run. */
  statefulSets?: StatefulSetSizeResult[];
  /** The Deployment sizes (bench/deployments.ts), when run. */
  deployments?: DeploymentSizeResult[];
  targets: TargetVerdict[];
  notes: string[];
}

export interface TargetVerdict {
  target: string;
  /** `partial`: met in part; `measured` says which part. undefined: not measured in this run. */
  met: boolean | 'partial' | undefined;
  measured: string;
}

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

const f = (v: number | undefined, digits = 2): string => (v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits));
const trio = (s: Summary, digits = 2): string => (s.count === 0 ? '–' : `${f(s.p50, digits)}/${f(s.p99, digits)}/${f(s.max, digits)}`);
const minutes = (s: number | undefined): string => (s === undefined ? 'never' : `${(s / 60).toFixed(1)} min`);

/** The stdout report. */
export function renderTables(r: BenchResults): string {
  const out: string[] = [];
  out.push(
    `rollout-guard bench — ${r.startedAt} on ${r.machine.host} (${r.machine.nproc} CPU ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}, k8s ${r.versions.K8S_VERSION ?? '?'}, kwok ${r.versions.KWOK_VERSION ?? '?'})`,
  );
  if (r.sizes.length > 0) {
    out.push('', 'Detection and explanation (seconds; p50/p99/max over the guards that stalled)');
    out.push(
      table(
        [
          'size (nodes×DS)',
          'pods',
          'stalled',
          'deadline→Stalled written',
          'deadline→watch sees it',
          'deadline→Event',
          'op histogram p99',
          'pod→explained',
          'failure→explained',
          'failure→node named',
        ],
        r.sizes.map((s) => [
          `${s.nodes}×${s.daemonsets}`,
          String(s.pods),
          `${s.verdict.stalled}/${s.verdict.expectedStalls}`,
          trio(s.detection.writtenS),
          trio(s.detection.observedS),
          trio(s.detection.eventS),
          f(s.detection.operatorHistogram.p99),
          trio(s.explanation.fromPodS),
          trio(s.explanation.fromFailureS),
          trio(s.explanation.nodeNamedFromFailureS),
        ]),
      ),
    );
    out.push('', 'First explanation, failure → node and cause in status (seconds; p50/p99/max and the number of samples)');
    out.push(
      table(
        [
          'size (nodes×DS)',
          'all samples',
          'n',
          'fleet-wide rollout',
          'n',
          'waves',
          'n',
          'waves run',
          'unexplained',
          'in the operator p99 ms: queue/pass/write/total (writes)',
        ],
        r.sizes.map((s) => {
          const e = s.explanation;
          return [
            `${s.nodes}×${s.daemonsets}`,
            trio(e.fromFailureS),
            String(e.fromFailureS.count),
            trio(e.fleetFromFailureS),
            String(e.fleetFromFailureS.count),
            trio(e.wavesFromFailureS),
            String(e.wavesFromFailureS.count),
            String(e.waves.count),
            String(e.waves.unexplained.length),
            `${f(e.operator.queue.p99Ms, 0)}/${f(e.operator.pass.p99Ms, 0)}/${f(e.operator.write.p99Ms, 0)}/${f(e.operator.total.p99Ms, 0)} (${e.operator.total.count})`,
          ];
        }),
      ),
    );
    for (const s of r.sizes) {
      const e = s.explanation;
      if (e.wavesWatchedFromFailureS === undefined) continue; // a result from before the split
      out.push(
        `${s.nodes}×${s.daemonsets} waves: pods still watched at the break ${trio(e.wavesWatchedFromFailureS)} s (${e.wavesWatchedFromFailureS.count}), a new pod watch first ${trio(e.wavesUnwatchedFromFailureS)} s (${e.wavesUnwatchedFromFailureS.count})`,
      );
    }
    for (const s of r.sizes) if (s.tail) out.push('', ...tailLines(`${s.nodes}×${s.daemonsets}`, s.tail));
    out.push('', "API load (operator's exact request count) and status writes");
    out.push(
      table(
        [
          'size',
          'watches opened',
          'ended early',
          'steady window',
          'steady non-watch req',
          'rollout window',
          'rollout req',
          'of which 409',
          'no-op PATCH',
          'writes/guard broken',
          'writes/guard exhausted',
          'writes/guard healthy',
          'writes per target change',
        ],
        r.sizes.map((s) => [
          `${s.nodes}×${s.daemonsets}`,
          String(s.api.watchesOpened),
          s.api.watchEarlyEnds === undefined ? '-' : String(s.api.watchEarlyEnds),
          `${f(s.api.steadySeconds, 0)} s`,
          String(s.api.steadyNonWatch),
          `${f(s.api.rolloutSeconds, 0)} s`,
          String(s.api.rolloutTotal),
          String(
            Object.entries(s.api.rollout)
              .filter(([k]) => k.endsWith(' 409'))
              .reduce((a, [, v]) => a + v, 0),
          ),
          String(s.api.noopStatusPatches),
          trio(s.api.statusWritesPerGuard.byCategory.broken, 0),
          trio(s.api.statusWritesPerGuard.byCategory.exhausted, 0),
          trio(s.api.statusWritesPerGuard.byCategory.healthy, 0),
          f(s.api.writesPerTargetChange, 3),
        ]),
      ),
    );
    out.push('', 'Rollout requests by verb and resource');
    for (const s of r.sizes)
      out.push(
        `  ${s.nodes}×${s.daemonsets}: ${
          Object.entries(s.api.rollout)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ') || 'none'
        }`,
      );
    out.push('', 'Operator cost');
    out.push(
      table(
        [
          'size',
          'cluster nodes',
          'cache KiB nodes-only/with pods',
          'B per node/pod',
          'RSS nodes-only MiB',
          'RSS with pods MiB',
          'peak RSS MiB',
          'CPU s setup/steady/rollout',
          'reconciles',
          'reconcile p99 ms (bucket ≤)',
          'queue wait p50/p99 ms (bucket ≤)',
          'status PATCH p50/p99 ms: operator / API server',
          'event-loop delay ms: max / p99 of 0.5 s windows',
          'max queue',
        ],
        r.sizes.map((s) => [
          `${s.nodes}×${s.daemonsets}`,
          String(s.clusterNodes),
          `${f(s.cost.cache.nodesOnlyKiB, 0)}/${f(s.cost.cache.withPodsKiB, 0)}`,
          `${s.cost.cache.bytesPerNode}/${s.cost.cache.bytesPerPod}`,
          f(s.cost.rssMiB.nodesOnly, 1),
          f(s.cost.rssMiB.withPods, 1),
          f(s.cost.rssMiB.peak, 1),
          `${f(s.cost.cpuSeconds.setup)}/${f(s.cost.cpuSeconds.steady)}/${f(s.cost.cpuSeconds.rollout)}`,
          String(s.cost.reconcile.count),
          `${f(s.cost.reconcile.p99Ms, 1)} (${f(s.cost.reconcile.bucketBoundMs, 0)})`,
          s.cost.queueWait
            ? `${f(s.cost.queueWait.p50Ms, 1)}/${f(s.cost.queueWait.p99Ms, 1)} (${f(s.cost.queueWait.bucketBoundMs, 0)})`
            : '–',
          `${s.cost.statusPatch ? `${f(s.cost.statusPatch.p50Ms, 1)}/${f(s.cost.statusPatch.p99Ms, 1)}` : '–'} / ${s.cost.statusPatchServer ? `${f(s.cost.statusPatchServer.p50Ms, 1)}/${f(s.cost.statusPatchServer.p99Ms, 1)}` : '–'}`,
          s.cost.eventLoopLag ? `${f(s.cost.eventLoopLag.maxMs, 0)} / ${f(s.cost.eventLoopLag.windowMaxP99Ms, 0)}` : '–',
          String(s.cost.maxQueueDepth),
        ]),
      ),
    );
    out.push(
      '',
      "Pods cached against what rolls (pods / RSS MiB / heap used MiB, lowest sample; linger of a finished rollout's watch in s)",
    );
    out.push(
      table(
        [
          'size',
          'idle, 1 guard',
          'idle, all guards',
          '1 DaemonSet rolls (peak)',
          'all roll (peak)',
          'single: roll s / released after s / status writes / requests',
          'linger s',
        ],
        r.sizes.map((s) => {
          const m = (x: { podsCached: number; rssMiB: number; heapMiB: number }): string =>
            `${x.podsCached} / ${f(x.rssMiB, 1)} / ${f(x.heapMiB, 1)}`;
          const c = s.podCache;
          return [
            `${s.nodes}×${s.daemonsets}`,
            m(c.idleOne),
            m(c.idleAll),
            m(c.single.peak),
            m(c.fleet.peak),
            `${f(c.single.rollSeconds, 1)} / ${f(c.single.releasedAfterS, 1)} / ${c.single.statusWrites} / ${c.single.requestsTotal}`,
            f(c.lingerMs / 1000, 0),
          ];
        }),
      ),
    );
    out.push('', "Watching Warning Events: the operator's informer objects (after rollout/end/peak) and their live heap");
    out.push(
      table(
        ['size', 'events-daemonsets', 'events-pods', 'B per Event', 'cache KiB', 'Events in namespace'],
        r.sizes.map((s) => {
          const e = s.cost.events;
          const o = (k: 'events-daemonsets' | 'events-pods') =>
            e ? `${e.objects[k].afterRollout}/${e.objects[k].end}/${e.objects[k].peak}` : '–';
          return [
            `${s.nodes}×${s.daemonsets}`,
            o('events-daemonsets'),
            o('events-pods'),
            e ? String(e.bytesPerEvent) : '–',
            e ? f(e.cacheKiB, 1) : '–',
            e ? String(e.namespaceEvents) : '–',
          ];
        }),
      ),
    );
    const contained = r.sizes.filter((s) => s.containment);
    if (contained.length > 0) {
      const c0 = contained[0]!.containment!;
      out.push(
        '',
        `Containment: a revision that passes readiness, then crashes (own pool, maxUnavailable ${c0.maxUnavailable}, Undo, failedNodesThreshold ${c0.failedNodesThreshold}; seconds)`,
      );
      out.push(
        "first crash: min lastState.terminated.finishedAt (whole seconds: up to 1 s early); threshold crash: the crash that reached the threshold, as the bench's watch saw it",
      );
      out.push(
        table(
          [
            'size',
            'ran on nodes',
            'created on',
            'crashed on',
            'first crash→Failed',
            'threshold crash→Failed',
            'Failed→undo',
            'undo→RolledBack',
            'first crash→undo',
            'apply→undo',
            'states',
            'result',
          ],
          contained.map((s) => {
            const c = s.containment!;
            return [
              `${s.nodes}×${s.daemonsets}`,
              `${c.reachedNodes} of ${c.nodes}`,
              String(c.createdOnNodes),
              String(c.crashedNodes),
              f(c.firstCrashToFailedS),
              f(c.thresholdCrashToFailedS),
              f(c.failedToUndoS),
              f(c.undoToRolledBackS),
              f(c.firstCrashToUndoS),
              f(c.timeline.undoS),
              c.states.join('→'),
              c.rolledBack ? (c.contained ? 'RolledBack, contained' : 'RolledBack, every node reached') : 'NOT ROLLED BACK',
            ];
          }),
        ),
      );
    }
    out.push('', 'rollout-guard vs KubeDaemonSetRolloutStuck (from the v2 apply; alert on an ideal 1 s scrape/eval)');
    out.push(
      table(
        [
          'size',
          'guard Stalled p50/max',
          'alert fires p50/max',
          'alert false firings (healthy DS)',
          'healthy guards ever Suspect',
          'unexpected Stalled',
        ],
        r.sizes.map((s) => [
          `${s.nodes}×${s.daemonsets}`,
          `${f(s.alert.guardStalledAfterS.p50, 1)} s / ${f(s.alert.guardStalledAfterS.max, 1)} s`,
          `${minutes(s.alert.alertFiresAfterS.p50)} / ${minutes(s.alert.alertFiresAfterS.max)}`,
          String(s.alert.falseFirings),
          String(s.verdict.suspectHealthy.length),
          String(s.verdict.unexpectedStalls.length),
        ]),
      ),
    );
    const retried = r.sizes.filter((s) => (s.verdict.retriedScrapes ?? []).length > 0);
    if (retried.length > 0) {
      out.push('', 'Scrapes answered on a second connection (the first failed before any answer)');
      for (const s of retried) out.push(`  ${s.nodes}×${s.daemonsets}: ${s.verdict.retriedScrapes.join('; ')}`);
    }
    out.push('', 'Phase durations (s)');
    out.push(
      table(
        ['size', ...Object.keys(r.sizes[0]!.phases), 'load avg (1m) min–max', 'other namespaces'],
        r.sizes.map((s) => [
          `${s.nodes}×${s.daemonsets}`,
          ...Object.values(s.phases).map((v) => f(v, 1)),
          `${f(s.machine.loadavg1Min)}–${f(s.machine.loadavg1Max)}`,
          String(s.machine.otherNamespaces.length),
        ]),
      ),
    );
  }
  if (r.micro.length > 0) {
    out.push(
      '',
      "Reconcile pass micro-benchmark (gather + decide + status diff, in memory; ms), and the dashboard's render of that change (view, detail, JSON) and its size",
    );
    out.push(
      table(
        [
          'DS nodes',
          'cluster nodes',
          'scenario',
          'state',
          'iterations',
          'p50',
          'p99',
          'max',
          'gather p99',
          'decide p99',
          'dashboard p99',
          'dashboard KiB',
        ],
        r.micro.map((m) => [
          String(m.dsNodes),
          String(m.clusterNodes),
          m.scenario,
          m.state,
          String(m.iterations),
          f(m.passMs.p50, 3),
          f(m.passMs.p99, 3),
          f(m.passMs.max, 3),
          f(m.gatherP99Ms, 3),
          f(m.decideP99Ms, 3),
          f(m.dashboard?.renderMs.p99, 3),
          m.dashboard ? f(m.dashboard.bytes / 1024, 1) : '-',
        ]),
      ),
    );
  }
  if (r.statefulSets?.length) out.push('', ...statefulSetLines(r.statefulSets));
  if (r.deployments?.length) out.push('', ...deploymentLines(r.deployments));
  out.push('', 'Targets');
  for (const t of r.targets)
    out.push(`  [${t.met === undefined ? 'n/a' : t.met === 'partial' ? 'PARTLY' : t.met ? 'met' : 'MISSED'}] ${t.target}: ${t.measured}`);
  for (const n of r.notes) out.push(`  note: ${n}`);
  return out.join('\n');
}

// --- SVG --------------------------------------------------------------------------------------------

interface Series {
  name: string;
  points: Array<[number, number]>;
  color: string;
  dashed?: boolean;
}

interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** A horizontal target line. */
  target?: { y: number; label: string };
  logX?: boolean;
  /** Labels of x positions (default: the number). */
  xTickLabels?: Map<number, string>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceStep(range: number): number {
  const raw = range / 5;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => raw <= s) ?? 10 * mag;
}

function chart(c: Chart, ox: number, oy: number, w: number, h: number): string {
  const pad = { l: 58, r: 12, t: 28, b: 58 };
  const pw = w - pad.l - pad.r;
  const ph = h - pad.t - pad.b;
  const pts = c.series.flatMap((s) => s.points);
  const xs = [...new Set(pts.map(([x]) => x))].sort((a, b) => a - b);
  const tx = (x: number) => (c.logX ? Math.log10(x) : x);
  const x0 = tx(xs[0] ?? 0);
  const x1 = tx(xs.at(-1) ?? 1);
  const yMaxData = Math.max(0, ...pts.map(([, y]) => y), c.target?.y ?? 0);
  const step = niceStep(yMaxData || 1);
  const yMax = Math.ceil((yMaxData * 1.1 || 1) / step) * step;
  const sx = (x: number) => ox + pad.l + (x1 === x0 ? pw / 2 : ((tx(x) - x0) / (x1 - x0)) * pw);
  const sy = (y: number) => oy + pad.t + ph - (y / yMax) * ph;
  const o: string[] = [];
  o.push(`<text x="${ox + w / 2}" y="${oy + 16}" text-anchor="middle" font-weight="bold">${esc(c.title)}</text>`);
  o.push(`<rect x="${ox + pad.l}" y="${oy + pad.t}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`);
  for (let y = 0; y <= yMax + 1e-9; y += step) {
    o.push(`<line x1="${ox + pad.l}" x2="${ox + pad.l + pw}" y1="${sy(y)}" y2="${sy(y)}" stroke="#eee"/>`);
    o.push(`<text x="${ox + pad.l - 4}" y="${sy(y) + 4}" text-anchor="end" font-size="10">${+y.toPrecision(4)}</text>`);
  }
  xs.forEach((x, i) => {
    // The outermost labels align inwards so they stay inside the panel.
    const anchor = xs.length > 1 && i === 0 ? 'start' : xs.length > 1 && i === xs.length - 1 ? 'end' : 'middle';
    o.push(
      `<text x="${sx(x)}" y="${oy + pad.t + ph + 14}" text-anchor="${anchor}" font-size="10">${esc(c.xTickLabels?.get(x) ?? String(x))}</text>`,
    );
  });
  o.push(`<text x="${ox + pad.l + pw / 2}" y="${oy + pad.t + ph + 28}" text-anchor="middle" font-size="11">${esc(c.xLabel)}</text>`);
  o.push(
    `<text transform="translate(${ox + 14},${oy + pad.t + ph / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(c.yLabel)}</text>`,
  );
  if (c.target) {
    o.push(
      `<line x1="${ox + pad.l}" x2="${ox + pad.l + pw}" y1="${sy(c.target.y)}" y2="${sy(c.target.y)}" stroke="#d33" stroke-dasharray="6 4"/>`,
    );
    o.push(
      `<text x="${ox + pad.l + pw - 4}" y="${sy(c.target.y) - 4}" text-anchor="end" font-size="10" fill="#d33">${esc(c.target.label)}</text>`,
    );
  }
  c.series.forEach((s, i) => {
    const sorted = [...s.points].sort((a, b) => a[0] - b[0]);
    o.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''} points="${sorted.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const [x, y] of sorted) o.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${s.color}"/>`);
    // Legend: two columns under the x-axis label.
    const lx = ox + pad.l + (i % 2) * (pw / 2);
    const ly = oy + pad.t + ph + 42 + Math.floor(i / 2) * 12;
    o.push(
      `<line x1="${lx}" x2="${lx + 12}" y1="${ly - 3}" y2="${ly - 3}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/><text x="${lx + 16}" y="${ly}" font-size="10">${esc(s.name)}</text>`,
    );
  });
  return o.join('\n');
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b'];

/** The plot: memory, detection, API load vs size, and the reconcile micro-benchmark curve. */
export function renderSvg(r: BenchResults): string {
  const charts: Chart[] = [];
  if (r.sizes.length > 0) {
    const byPods = (f: (s: SizeResult) => number | undefined): Array<[number, number]> =>
      r.sizes.flatMap((s) => {
        const v = f(s);
        return v === undefined || Number.isNaN(v) ? [] : [[s.pods, v] as [number, number]];
      });
    const ticks = new Map(r.sizes.map((s) => [s.pods, `${s.nodes}×${s.daemonsets} (${s.pods})`]));
    charts.push({
      title: 'Operator process memory',
      xLabel: 'nodes × DaemonSets (daemon pods)',
      yLabel: 'RSS, MiB',
      xTickLabels: ticks,
      series: [
        { name: 'peak RSS (VmHWM)', points: byPods((s) => s.cost.rssMiB.peak), color: COLORS[0]! },
        { name: 'RSS, every guard idle', points: byPods((s) => s.podCache.idleAll.rssMiB), color: COLORS[1]! },
        { name: 'RSS, one guard idle', points: byPods((s) => s.podCache.idleOne.rssMiB), color: COLORS[3]!, dashed: true },
        { name: 'RSS, nodes only', points: byPods((s) => s.cost.rssMiB.nodesOnly), color: COLORS[2]!, dashed: true },
      ],
    });
    charts.push({
      title: 'Daemon pods cached by the operator',
      xLabel: 'nodes × DaemonSets (daemon pods)',
      yLabel: 'pods cached',
      xTickLabels: ticks,
      series: [
        { name: 'all DaemonSets rolling (peak)', points: byPods((s) => s.podCache.fleet.peak.podsCached), color: COLORS[0]! },
        { name: 'one DaemonSet rolling (peak)', points: byPods((s) => s.podCache.single.peak.podsCached), color: COLORS[1]! },
        { name: 'idle', points: byPods((s) => s.podCache.idleAll.podsCached), color: COLORS[2]!, dashed: true },
      ],
    });
    charts.push({
      title: 'What the caches hold (live heap)',
      xLabel: 'nodes × DaemonSets (daemon pods)',
      yLabel: 'MiB',
      xTickLabels: ticks,
      series: [
        { name: 'slim caches if every pod were cached', points: byPods((s) => s.cost.cache.withPodsKiB / 1024), color: COLORS[1]! },
        { name: 'slim caches, nodes only', points: byPods((s) => s.cost.cache.nodesOnlyKiB / 1024), color: COLORS[2]!, dashed: true },
        {
          name: 'if full Pod objects were cached',
          points: byPods((s) => (s.cost.cache.fullPodBytes !== undefined ? (s.cost.cache.fullPodBytes * s.pods) / 1024 / 1024 : undefined)),
          color: COLORS[4]!,
          dashed: true,
        },
      ],
    });
    charts.push({
      title: 'Detection latency after the deadline',
      xLabel: 'nodes × DaemonSets (daemon pods)',
      yLabel: 'seconds',
      xTickLabels: ticks,
      target: { y: 2, label: 'target p99 ≤ 2 s' },
      series: [
        { name: 'p50 (status written)', points: byPods((s) => s.detection.writtenS.p50), color: COLORS[2]! },
        { name: 'p99 (status written)', points: byPods((s) => s.detection.writtenS.p99), color: COLORS[3]! },
        { name: 'max (watch sees it)', points: byPods((s) => s.detection.observedS.max), color: COLORS[4]!, dashed: true },
      ],
    });
    charts.push({
      title: 'API requests per guard during the rollout',
      xLabel: 'nodes × DaemonSets (daemon pods)',
      yLabel: 'requests per guard',
      xTickLabels: ticks,
      series: [
        { name: 'all requests / guard', points: byPods((s) => s.api.rolloutTotal / s.daemonsets), color: COLORS[0]! },
        {
          name: 'status writes / healthy guard',
          points: byPods((s) => s.api.statusWritesPerGuard.byCategory.healthy.mean),
          color: COLORS[2]!,
        },
        {
          name: 'status writes / stalled guard',
          points: byPods((s) => s.api.statusWritesPerGuard.byCategory.broken.mean),
          color: COLORS[3]!,
        },
      ],
    });
  }
  const contained = r.sizes.filter((s) => s.containment);
  if (contained.length > 0) {
    const byPods = (f: (c: NonNullable<SizeResult['containment']>) => number | undefined): Array<[number, number]> =>
      contained.flatMap((s) => {
        const v = f(s.containment!);
        return v === undefined ? [] : [[s.pods, v] as [number, number]];
      });
    const ticks = new Map(contained.map((s) => [s.pods, `${s.nodes}×${s.daemonsets} (${s.pods})`]));
    charts.push({
      title: 'Containment of a revision that crashes after readiness',
      xLabel: 'size the operator carries: nodes × DaemonSets (daemon pods)',
      yLabel: 'seconds',
      xTickLabels: ticks,
      series: [
        { name: 'first crash → Failed', points: byPods((c) => c.firstCrashToFailedS), color: COLORS[3]! },
        { name: 'Failed → undo', points: byPods((c) => c.failedToUndoS), color: COLORS[0]!, dashed: true },
        { name: 'undo → RolledBack', points: byPods((c) => c.undoToRolledBackS), color: COLORS[2]!, dashed: true },
      ],
    });
    charts.push({
      title: 'Nodes the crashing revision ran on before the undo',
      xLabel: 'size the operator carries: nodes × DaemonSets (daemon pods)',
      yLabel: 'nodes',
      xTickLabels: ticks,
      target: { y: contained[0]!.containment!.nodes, label: `every node of its pool (${contained[0]!.containment!.nodes})` },
      series: [
        { name: 'ran on (a container started)', points: byPods((c) => c.reachedNodes), color: COLORS[1]! },
        { name: 'crashed on', points: byPods((c) => c.crashedNodes), color: COLORS[3]!, dashed: true },
      ],
    });
  }
  const curve = r.micro.filter((m) => m.scenario === 'rollout' && m.clusterNodes === m.dsNodes);
  if (curve.length > 0) {
    charts.push({
      title: 'One reconcile pass (gather+decide+diff), in memory',
      xLabel: 'nodes of the DaemonSet (log scale)',
      yLabel: 'ms',
      logX: true,
      target: { y: 50, label: 'target p99 < 50 ms at 1,000 nodes' },
      series: [
        { name: 'p50', points: curve.map((m) => [m.dsNodes, m.passMs.p50 ?? 0]), color: COLORS[2]! },
        { name: 'p99', points: curve.map((m) => [m.dsNodes, m.passMs.p99 ?? 0]), color: COLORS[3]! },
      ],
    });
  }
  const W = 460;
  const H = 300;
  const cols = 2;
  const rows = Math.ceil(charts.length / cols);
  const body = charts.map((c, i) => chart(c, (i % cols) * W, 30 + Math.floor(i / cols) * H, W, H)).join('\n');
  const title = `rollout-guard bench ${r.startedAt.slice(0, 10)} — ${r.machine.host}, ${r.machine.nproc} CPU, k8s ${r.versions.K8S_VERSION ?? '?'}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * W}" height="${30 + rows * H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="20" font-size="13">${esc(title)}</text>
${body}
</svg>
`;
}

/** Where the seconds of a size's slow explanations went (bench/tail.ts), as text. */
export function tailLines(size: string, t: TailResult): string[] {
  const ms = (v: number | undefined): string => (v === undefined ? '-' : String(Math.round(v * 1000)));
  const p = t.parts;
  const out = [
    `${size}: explanations accounted part by part ${t.accounted}/${t.samples}; p99 in ms: bench→operator ${ms(p.benchToOperator.p99)}, to the pass ${ms(p.toPass.p99)}, pass ${ms(p.pass.p99)}, write ${ms(p.write.p99)}, reader ${ms(p.reader.p99)}`,
    `  watches behind the API server's write, p99 ms (stamps in whole seconds): ${Object.entries(t.watchDelivery)
      .map(([r, h]) => `${r} ${h.p99Ms ?? '-'} (${h.overTwoSeconds} of ${h.count} over 2 s)`)
      .join(', ')}; the bench's pods ${ms(t.benchWatchDelivery.p99)}`,
    `  pod watches: opened ${t.podWatches.opened}, ended ${t.podWatches.ended} (${Object.entries(t.podWatches.endedWhy)
      .map(([why, n]) => `${n} ${why}`)
      .join(
        '; ',
      )}), ended early by the server ${t.podWatches.endedEarly}, expired ${t.podWatches.expired}, relisted ${t.podWatches.relisted}, failed ${t.podWatches.failed}${
      t.podWatches.mostOpened ? `; most opened: ${t.podWatches.mostOpened.target} ${t.podWatches.mostOpened.opened}` : ''
    }`,
    `  ended pod watches furthest behind, max lag ms (events): ${(t.podWatches.slowest ?? []).map((w) => `${w.target} ${w.maxLagMs} (${w.events})`).join(', ')}`,
  ];
  const line = (x: SlowSample): string => {
    const q = x.parts;
    return q
      ? `  ${x.guard} wave ${x.wave} (${x.category}) ${x.fromFailureS} s = bench→operator ${ms(q.benchToOperator)} + to the pass ${ms(q.toPass)} + pass ${ms(q.pass)} + write ${ms(q.write)} + reader ${ms(q.reader)} ms${q.sameWrite === false ? ' (with the wait for the later write that carried the cause)' : ''}; largest: ${x.largest}; watch lag bench ${ms(q.benchWatchLag)}, operator ${ms(q.operatorWatchLag)} ms${q.operatorEventLag !== undefined ? ` (its event ${ms(q.operatorEventLag)} ms after its own write${q.operatorWriteAfterBench ? `, a write ${ms(q.operatorWriteAfterBench)} ms after the one the bench saw failing` : ''})` : ''}${q.operatorPod ? `; the status first named ${q.operatorPod}, not ${x.pod ?? 'its pod'}` : ''}${q.twinAfterBench !== undefined ? `; its twin watch ${ms(q.twinAfterBench)} ms after the bench's` : ''}`
      : `  ${x.guard} wave ${x.wave} (${x.category}) ${x.fromFailureS} s: the operator's write was not found in its log`;
  };
  out.push(...t.slow.map(line));
  // Over at most 100 samples the p99 is the first of the slowest; those over 1 s are listed above.
  const key = (x: SlowSample): string => `${x.guard}/${x.wave}`;
  const shown = new Set(t.slow.map(key));
  const rest = t.slowest.filter((x) => !shown.has(key(x)));
  if (rest.length > 0)
    out.push(`  the slowest samples${t.slow.length > 0 ? ' under 1 s' : ''} (the p99 rests on them):`, ...rest.map(line));
  return out;
}

/** The StatefulSet sizes, as text. */
export function statefulSetLines(sizes: readonly StatefulSetSizeResult[]): string[] {
  const trio = (x: { p50?: number; p99?: number; max?: number; count: number }): string =>
    `${x.p50 ?? '-'}/${x.p99 ?? '-'}/${x.max ?? '-'} (${x.count})`;
  const out = ['StatefulSets: first explanation and detection (seconds; p50/p99/max (samples)), false verdicts, cost'];
  for (const s of sizes) {
    const v = s.verdict;
    const o = s.explanation.operator;
    out.push(
      `${s.statefulSets}×${s.replicas} (${s.pods} pods on ${s.nodes} nodes): stalled ${v.stalled}/${v.expectedStalls}${v.missed.length ? `, missed ${v.missed.join(' ')}` : ''}${v.wrongCause.length ? `, wrong cause ${v.wrongCause.join('; ')}` : ''}; first explanation ${trio(s.explanation.fromFailureS)}; detection ${trio(s.detection)}`,
      `  healthy Suspect ${v.suspectHealthy.length} / Stalled ${v.stalledHealthy.length}; undos ${v.undos}; steady non-watch requests ${s.api.steadyNonWatch} in ${s.api.steadySeconds} s; RSS idle ${s.cost.rssMiB.idle} / peak ${s.cost.rssMiB.peak} MiB; CPU over the rollout ${s.cost.cpuSeconds.rollout} s`,
      `  status PATCH p99 ms: operator ${s.cost.statusPatch.p99Ms ?? '-'} / API server ${s.cost.statusPatchServer.p99Ms ?? '-'}; the operator's part p99 ms: fromEvent ${o.fromEvent.p99Ms ?? '-'}, queue ${o.queue.p99Ms ?? '-'}, pass ${o.pass.p99Ms ?? '-'}, write ${o.write.p99Ms ?? '-'} (${o.total.count} writes)`,
      ...tailLines(`${s.statefulSets}×${s.replicas} StatefulSets`, s.tail),
    );
  }
  return out;
}
