// The OpenAPI document the app serves, linted as Redocly CLI lints it with the repository's
// redocly.yaml (the recommended rules): no error, no warning. Offline: the document has no
// external reference and the rules are built in.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { lintFromString, loadConfig } from '@redocly/openapi-core';
import { servedOpenApiDocument } from '../helpers/openapi.ts';

type Document = { paths: Record<string, Record<string, unknown>> };

let document: Document;
before(async () => {
  document = (await servedOpenApiDocument()) as Document;
});

test('Redocly’s recommended rules find no error and no warning in the document', async () => {
  const config = await loadConfig({ configPath: join(import.meta.dirname, '..', '..', 'redocly.yaml') });
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: join(import.meta.dirname, 'openapi.json'),
    config,
  });
  assert.deepEqual(
    problems.map(
      (problem) =>
        `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`,
    ),
    [],
  );
});

test('paths that match the same URLs never share a method (why redocly.yaml turns no-ambiguous-paths off)', () => {
  const templated = (segment: string) => /^{.+}$/.test(segment);
  const templates = (segments: string[]) => segments.filter(templated).length;
  // Redocly's test of two paths: as many segments and templates, each segment the same text or a
  // template in either (a path with fewer templates is the more concrete one, matched first).
  const overlap = (a: string[], b: string[]) =>
    a.length === b.length &&
    templates(a) === templates(b) &&
    a.every((segment, i) => templated(segment) || templated(b[i]!) || segment === b[i]);
  const paths = Object.keys(document.paths);
  const overlapping: string[] = [];
  const clashes: string[] = [];
  for (const [i, a] of paths.entries()) {
    for (const b of paths.slice(i + 1)) {
      if (!overlap(a.split('/'), b.split('/'))) continue;
      overlapping.push(`${a} ${b}`);
      const shared = Object.keys(document.paths[a]!).filter((method) => method in document.paths[b]!);
      for (const method of shared) clashes.push(`${method.toUpperCase()} ${a} and ${b}`);
    }
  }
  assert.deepEqual(clashes, []);
  assert.deepEqual(overlapping, [
    '/api/v1/transfers/by-external/{externalId} /api/v1/transfers/{transferId}/prepare',
    '/api/v1/transfers/by-external/{externalId} /api/v1/transfers/{transferId}/confirm-broadcast',
  ]);
});
