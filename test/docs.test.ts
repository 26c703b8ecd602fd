/**
 * The documentation holds together: README.md stays an entry page (under 300 lines) and links every page
 * of docs/; every relative link in README.md and docs/*.md names a file that exists, and every `#anchor`
 * a heading of the page it points to (GitHub's slugs: lowercase, spaces → '-', punctuation dropped, a
 * repeated heading numbered -1, -2, …); every code path they name (`reconcile/gather.ts`, under src/;
 * `config/rbac/role.yaml`) exists; and the `kubectl get rg` sample in the README shows exactly the
 * CRD's printer columns, in their order, as kubectl prints them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';

/** The repository root: this file runs as dist/test/docs.test.js. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');

const docPages = (): string[] =>
  readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join(DOCS, f));
const pages = (): string[] => [README, ...docPages()];
const read = (file: string): string => readFileSync(file, 'utf8');

/** The lines of a Markdown file outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading's text. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a file's headings, repeated ones numbered as GitHub numbers them. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(read(file))) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  from: string;
  line: number;
  target: string;
}

/** Each line of `file` outside fenced code blocks, with its line number. */
function proseLines(file: string): Array<{ line: string; number: number }> {
  let fenced = false;
  return read(file)
    .split('\n')
    .flatMap((line, i) => {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      return fenced ? [] : [{ line, number: i + 1 }];
    });
}

/** Every inline link of a file outside code (fenced blocks and code spans), images included. */
function links(file: string): Link[] {
  return proseLines(file).flatMap(({ line, number }) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({
      from: file,
      line: number,
      target: m[1]!,
    })),
  );
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Where a relative link points: the file (or directory) and the anchor, if any. */
function resolveLink(link: Link): { path: string; anchor?: string } {
  const [pathPart, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? link.from : resolve(dirname(link.from), decodeURIComponent(pathPart));
  return anchor === undefined ? { path } : { path, anchor: decodeURIComponent(anchor) };
}

/** A path of src/ as the pages name it, without `src/` (`reconcile/gather.ts`, `reconcile/targets/`), or with it. */
const SRC_PATH = /^(?:src\/)?(?:api|domain|k8s|runtime|reconcile|cli)\/[\w./-]+$/;
/** A path of the repository outside src/ (`config/rbac/role.yaml`, `test/api/kinds.test.ts`). */
const REPO_PATH = /^(?:test|config|charts|deploy|scripts|cluster|bench|demo)\/[\w./-]+$/;

/** Every repository path a page names in a code span outside fenced blocks, as the path from the root. */
function codePaths(file: string): Link[] {
  return proseLines(file).flatMap(({ line, number }) =>
    [...line.matchAll(/`([^`\s]+)`/g)].flatMap((m): Link[] => {
      const p = m[1]!;
      if (REPO_PATH.test(p)) return [{ from: file, line: number, target: p }];
      return SRC_PATH.test(p) ? [{ from: file, line: number, target: p.startsWith('src/') ? p : `src/${p}` }] : [];
    }),
  );
}

const where = (link: Link): string => `${relative(ROOT, link.from)}:${link.line}: ${link.target}`;

/** The header of the CRD's default `kubectl get` table: NAME, then the printer columns without a priority. */
function printerHeader(crdFile: string, wide: boolean): string[] {
  const crd = parseAllDocuments(read(join(ROOT, crdFile)))
    .map(
      (d) =>
        d.toJS() as {
          kind?: string;
          spec?: { versions?: { served?: boolean; additionalPrinterColumns?: { name: string; priority?: number }[] }[] };
        },
    )
    .find((d) => d?.kind === 'CustomResourceDefinition');
  assert.ok(crd, `${crdFile} holds a CustomResourceDefinition`);
  const version = crd.spec?.versions?.find((v) => v.served) ?? crd.spec?.versions?.[0];
  const columns = version?.additionalPrinterColumns ?? [];
  assert.ok(columns.length > 0, `${crdFile} has printer columns`);
  return ['NAME', ...columns.filter((c) => wide || !c.priority).map((c) => c.name.toUpperCase())];
}

/** Each sample of `$ kubectl get <resource>` in a file: its header line (the first after the command starting with NAME). */
function samples(file: string, resource: string): { command: string; header: string[] }[] {
  const lines = read(file).split('\n');
  const out: { command: string; header: string[] }[] = [];
  lines.forEach((line, i) => {
    const m = /^\$ kubectl get (\S+)(.*)$/.exec(line);
    if (!m || m[1] !== resource) return;
    const header = lines.slice(i + 1).find((l) => l.startsWith('NAME'));
    assert.ok(header !== undefined, `${relative(ROOT, file)}:${i + 1}: no header line after "${line}"`);
    out.push({ command: line, header: header.trim().split(/\s+/) });
  });
  return out;
}

describe('documentation', () => {
  it('README.md is an entry page: under 300 lines', () => {
    const lines = read(README).split('\n').length - (read(README).endsWith('\n') ? 1 : 0);
    assert.ok(lines < 300, `README.md has ${lines} lines; move reference material to docs/`);
  });

  it('every page of docs/ starts with its title, then one line of purpose that links back to the README', () => {
    for (const page of docPages()) {
      const [title, blank, purpose] = read(page).split('\n');
      assert.match(title ?? '', /^# \S/, `${relative(ROOT, page)}: a title first`);
      assert.equal(blank, '', `${relative(ROOT, page)}: a blank line after the title`);
      assert.match(purpose ?? '', /\]\(\.\.\/README\.md(#[^)]*)?\)/, `${relative(ROOT, page)}: the purpose line links to ../README.md`);
    }
  });

  it('every alert has a runbook_url, a section of docs/runbook.md named for it', () => {
    const rules = parseYaml(read(join(ROOT, 'charts/rollout-guard/files/prometheus-rules.yaml'))) as {
      groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[];
    };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    assert.ok(alerts.length >= 6, `alerts found: ${alerts.length}`);
    const sections = anchors(join(ROOT, 'docs/runbook.md'));
    for (const a of alerts) {
      assert.equal(a.annotations?.runbook_url, `docs/runbook.md#${a.alert!.toLowerCase()}`, `${a.alert}: its runbook_url`);
      assert.ok(sections.has(a.alert!.toLowerCase()), `docs/runbook.md has a section ${a.alert}`);
    }
  });

  it('every relative link in README.md and docs/*.md names a file that exists', () => {
    const broken = pages()
      .flatMap(links)
      .filter((l) => !isExternal(l.target))
      .filter((l) => !existsSync(resolveLink(l).path))
      .map(where);
    assert.deepEqual(broken, []);
  });

  it('every code path README.md and docs/*.md name exists', () => {
    const named = pages().flatMap(codePaths);
    assert.ok(named.length > 100, `code paths found: ${named.length}`);
    const missing = named.filter((p) => !existsSync(join(ROOT, p.target))).map(where);
    assert.deepEqual(missing, []);
  });

  it('every #anchor names a heading of the page it points to', () => {
    const cache = new Map<string, Set<string>>();
    const broken = pages()
      .flatMap(links)
      .filter((l) => !isExternal(l.target))
      .filter((l) => {
        const { path, anchor } = resolveLink(l);
        if (anchor === undefined || !path.endsWith('.md') || !existsSync(path) || statSync(path).isDirectory()) return false;
        if (!cache.has(path)) cache.set(path, anchors(path));
        return !cache.get(path)!.has(anchor);
      })
      .map(where);
    assert.deepEqual(broken, []);
  });

  it('README.md links every page of docs/', () => {
    const linked = new Set(
      links(README)
        .filter((l) => !isExternal(l.target))
        .map((l) => resolveLink(l).path),
    );
    const unlinked = docPages()
      .filter((p) => !linked.has(p))
      .map((p) => relative(ROOT, p));
    assert.deepEqual(unlinked, []);
  });

  it('slugs follow GitHub: lowercase, spaces to dashes, punctuation dropped', () => {
    assert.equal(slug('Undo: how and when'), 'undo-how-and-when');
    assert.equal(slug('Securing /metrics'), 'securing-metrics');
    assert.equal(slug('`rollout-guard check` for CI pipelines'), 'rollout-guard-check-for-ci-pipelines');
    assert.equal(
      slug('Judging by comparison: would the previous revision fail the same way?'),
      'judging-by-comparison-would-the-previous-revision-fail-the-same-way',
    );
  });

  it("the README's `kubectl get rg` sample has exactly the CRD's printer columns, in order", () => {
    const found = samples(README, 'rg');
    assert.ok(found.length > 0, 'README.md shows `$ kubectl get rg`');
    for (const { command, header } of found) {
      assert.deepEqual(header, printerHeader('config/crd/rolloutguards.yaml', /-o\s*wide/.test(command)), command);
    }
  });

  it('every `kubectl get rg` and `kubectl get rgp` sample in docs/ has the printer columns of its CRD', () => {
    for (const page of docPages()) {
      for (const [resource, crd] of [
        ['rg', 'config/crd/rolloutguards.yaml'],
        ['rgp', 'config/crd/rolloutguardpolicies.yaml'],
      ] as const) {
        for (const { command, header } of samples(page, resource)) {
          assert.deepEqual(header, printerHeader(crd, /-o\s*wide/.test(command)), `${relative(ROOT, page)}: ${command}`);
        }
      }
    }
  });
});
