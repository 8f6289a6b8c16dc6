// The source stays readable in pieces: no function in src/ longer than 80 lines, no file over 400
// (docs/architecture.md). A factory returning an object of methods counts as one function, so a
// store or a worker reads as named parts it binds together.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_FUNCTION_LINES = 80;
const MAX_FILE_LINES = 400;

const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => join(ROOT, 'src', file));

/** Every function of a file (declarations, methods, arrows, expressions) with its length in lines. */
function functionsOf(path: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named =
        (node as { name?: ts.Node }).name ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name : undefined);
      found.push({
        name: `${relative(ROOT, path)}:${first + 1} ${named?.getText() ?? '(anonymous)'}`,
        lines: last - first + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test(`no function in src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
  const long = sources.flatMap(functionsOf).filter(({ lines }) => lines > MAX_FUNCTION_LINES);
  assert.deepEqual(
    long.map(({ name, lines }) => `${name}: ${lines} lines`),
    [],
  );
});

test(`no file in src/ is longer than ${MAX_FILE_LINES} lines`, () => {
  const long = sources
    .map((path) => ({ path: relative(ROOT, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_FILE_LINES);
  assert.deepEqual(
    long.map(({ path, lines }) => `${path}: ${lines} lines`),
    [],
  );
});
