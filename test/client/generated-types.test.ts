import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, test } from 'node:test';
import { createTransferRouterClient } from '../../clients/typescript/src/index.ts';
import { CLIENT_TYPES_PATH, generateClientTypes } from '../../tools/client-types.ts';
import { servedOpenApiDocument } from '../helpers/openapi.ts';

let document: { paths: Record<string, Record<string, { operationId?: string }>> };
before(async () => {
  document = (await servedOpenApiDocument()) as typeof document;
});

test('the TypeScript client’s committed types are generated from the OpenAPI document the service serves', async () => {
  const generated = await generateClientTypes(document);
  const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
  assert.ok(
    generated === committed,
    `${CLIENT_TYPES_PATH} differs from the served document: run \`npm run generate:client\` and commit it`,
  );
  assert.match(committed, /prepareTransfer: \{/, 'operations are named after their operationId');
});

test('the client has a method for every operation, named after its operationId', () => {
  const client = createTransferRouterClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'mh_test_x' });
  const operations = Object.values(document.paths).flatMap((path) =>
    Object.values(path).map((operation) => operation.operationId ?? '(none)'),
  );
  const missing = operations.filter(
    (operationId) => typeof (client as Record<string, unknown>)[operationId] !== 'function',
  );
  assert.deepEqual(missing, [], 'operations the client has no method for');
  assert.ok(operations.length >= 25);
});
