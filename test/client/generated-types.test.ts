import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { CLIENT_TYPES_PATH, generateClientTypes } from '../../tools/client-types.ts';
import { servedOpenApiDocument } from '../helpers/openapi.ts';

test('the TypeScript client’s committed types are generated from the OpenAPI document the service serves', async () => {
  const generated = await generateClientTypes(await servedOpenApiDocument());
  const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
  assert.ok(
    generated === committed,
    `${CLIENT_TYPES_PATH} differs from the served document: run \`npm run generate:client\` and commit it`,
  );
  assert.match(committed, /prepareTransfer: \{/, 'operations are named after their operationId');
});
