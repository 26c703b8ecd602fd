/**
 * The domain stays readable as a chain of short, named phases: no function or method in src/domain is
 * longer than MAX_LINES. Measured with the TypeScript parser, so arrow functions and methods count too.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 120;
const DOMAIN = fileURLToPath(new URL('../../../src/domain/', import.meta.url));

interface Measured {
  where: string;
  lines: number;
}

function functionsIn(file: string): Measured[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Measured[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const start = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const name = n.name && ts.isIdentifier(n.name) ? n.name.text : '(anonymous)';
      out.push({ where: `${file.slice(DOMAIN.length)}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('src/domain function length', () => {
  const files = readdirSync(DOMAIN)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(DOMAIN, f));

  it('finds the domain sources and their functions', () => {
    assert.ok(files.length >= 10, `domain files found: ${files.length}`);
    assert.ok(files.flatMap(functionsIn).some((f) => f.where.includes('stateMachine.ts') && f.where.endsWith(' decide')));
  });

  it(`has no function longer than ${MAX_LINES} lines`, () => {
    const long = files.flatMap(functionsIn).filter((f) => f.lines > MAX_LINES);
    assert.deepEqual(long, []);
  });
});
