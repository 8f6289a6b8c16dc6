import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * The TypeScript client lands its transactions by the service's landing policy, packages/landing.
 * Integrators install the client as one package, with no package of this repository besides, so
 * it carries a copy of the policy's files, generated here and committed; a test fails while the
 * copy differs from the package.
 */

const SOURCE_PATH = join(import.meta.dirname, '..', 'packages', 'landing', 'src');

/** Where the client keeps its copy. */
export const CLIENT_LANDING_PATH = join(import.meta.dirname, '..', 'clients', 'typescript', 'src', 'landing');

const header = (
  name: string,
) => `// Copied from packages/landing/src/${name} by \`npm run generate:client\`. Do not edit: change
// the package and run it again (a test fails while this copy differs from it).

`;

/** The files of the client's copy (the package's sources, tests left out), by name, as committed. */
export async function clientLandingFiles(): Promise<Map<string, string>> {
  const names = (await readdir(SOURCE_PATH))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .sort();
  return new Map(
    await Promise.all(
      names.map(
        async (name) => [name, header(name) + (await readFile(join(SOURCE_PATH, name), 'utf8'))] as const,
      ),
    ),
  );
}

// `npm run generate:client`: rewrites the client's copy.
if (import.meta.main) {
  await rm(CLIENT_LANDING_PATH, { recursive: true, force: true });
  await mkdir(CLIENT_LANDING_PATH);
  for (const [name, text] of await clientLandingFiles())
    await writeFile(join(CLIENT_LANDING_PATH, name), text);
  process.stdout.write(`wrote ${CLIENT_LANDING_PATH}\n`);
}
