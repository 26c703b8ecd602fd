/**
 * The sources stay readable in one sitting: no function or method in src/ is longer than MAX_LINES
 * (measured with the TypeScript parser, so arrow functions and methods count too), and no file is longer
 * than MAX_FILE_LINES unless docs/design.md says why under "Files over 400 lines".
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 80;
const MAX_FILE_LINES = 400;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

interface Measured {
  where: string;
  lines: number;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every function-like node with a body in `text`, with its first line and length. */
export function functionsIn(file: string, text: string): Measured[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Measured[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const start = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const name = n.name && ts.isIdentifier(n.name) ? n.name.text : '(anonymous)';
      out.push({ where: `${file}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The files docs/design.md lists under "Files over 400 lines", as `src/…` paths. */
export function exemptFiles(design: string): string[] {
  const section = /^## Files over 400 lines\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(design)?.[1] ?? '';
  return [...section.matchAll(/^- `(src\/[^`]+\.ts)`/gm)].map((m) => m[1]!);
}

describe('source size', () => {
  const files = tsFiles(SRC).map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') }));

  it('measures every function form', () => {
    const text = [
      'function a() {\n  return 1;\n}',
      'const b = () => {\n  return 2;\n};',
      'class C {\n  m() {\n    return 3;\n  }\n}',
      'const d = function () {\n  return 4;\n};',
    ].join('\n');
    assert.deepEqual(
      functionsIn('x.ts', text).map((f) => `${f.where} ${f.lines}`),
      ['x.ts:1 a 3', 'x.ts:4 (anonymous) 3', 'x.ts:8 m 3', 'x.ts:12 (anonymous) 3'],
    );
  });

  it('reads the exemptions from the design notes', () => {
    const design = '# D\n## Files over 400 lines\n\n- `src/k8s/a.ts`: why.\n- `src/b.ts` (410 lines): why.\n\n## Next\n- `src/c.ts`\n';
    assert.deepEqual(exemptFiles(design), ['src/k8s/a.ts', 'src/b.ts']);
  });

  it('finds the sources and their functions', () => {
    assert.ok(files.length >= 50, `source files found: ${files.length}`);
    assert.ok(files.flatMap((f) => functionsIn(f.path, f.text)).some((f) => f.where.endsWith(' decide')));
  });

  it(`has no function longer than ${MAX_LINES} lines`, () => {
    const long = files.flatMap((f) => functionsIn(f.path, f.text)).filter((f) => f.lines > MAX_LINES);
    assert.deepEqual(long, []);
  });

  it(`has no file longer than ${MAX_FILE_LINES} lines that the design notes do not explain`, () => {
    const exempt = exemptFiles(readFileSync(join(ROOT, 'docs', 'design.md'), 'utf8'));
    const long = files
      .filter((f) => f.text.split('\n').length > MAX_FILE_LINES && !exempt.includes(f.path))
      .map((f) => `${f.path}: ${f.text.split('\n').length} lines`);
    assert.deepEqual(long, []);
    const stale = exempt.filter((p) => {
      const f = files.find((x) => x.path === p);
      return !f || f.text.split('\n').length <= MAX_FILE_LINES;
    });
    assert.deepEqual(stale, [], 'listed in docs/design.md but missing or not over the limit');
  });
});
