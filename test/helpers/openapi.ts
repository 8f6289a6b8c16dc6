import { createTestApp } from './app.ts';

/** The OpenAPI document the app serves at /api/v1/openapi.json, from an app built for the purpose. */
export async function servedOpenApiDocument(): Promise<object> {
  const t = await createTestApp();
  try {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`openapi.json answered ${response.statusCode}`);
    return response.json();
  } finally {
    await t.close();
  }
}
