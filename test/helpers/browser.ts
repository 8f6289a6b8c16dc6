import { existsSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs; browser tests drive it through playwright-core. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. A newcomer's machine may lack
 * Chromium: the tests are then skipped with that reason, except where `REQUIRE_BROWSER=1` (set by
 * `.ci/run`), where a missing browser fails them.
 */
export function browserUnavailable(): string | undefined {
  if (existsSync(CHROMIUM_PATH) || process.env.REQUIRE_BROWSER === '1') return undefined;
  return `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

/** Launches headless Chromium, isolated from the network services a desktop browser would call. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const ROOT = join(import.meta.dirname, '..', '..');
/** Marks the resolution the check below asks of esbuild itself, so that it is not checked again. */
const CHECKED = Symbol('checked');

/** What a browser bundle of an entry holds, and the Node.js modules its code asked for. */
export interface BrowserBundle {
  /** The bundle as one ES module. */
  code: string;
  /** Each import of a Node.js built-in, as `<importer> imports <module>`, importers from the repository's root. */
  nodeImports: string[];
}

/**
 * Bundles `entry` (from the repository's root) with everything it imports for a browser, as a front
 * end's build would (esbuild, platform `browser`). An import of a Node.js built-in (`node:crypto`,
 * `fs`, ...) that no package replaces for browsers is recorded and left out, so that the test names
 * every one rather than esbuild stopping at the first.
 */
export async function bundleForBrowser(entry: string): Promise<BrowserBundle> {
  const nodeImports: string[] = [];
  const recordNodeImports: Plugin = {
    name: 'record-node-imports',
    setup(bundler) {
      bundler.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === CHECKED || !isBuiltin(args.path)) return undefined;
        // A package may map a built-in to its own browser code (its `browser` field): esbuild's
        // own resolution says whether anything is left of it.
        const resolved = await bundler.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: CHECKED,
        });
        if (resolved.errors.length === 0 && !resolved.external) return undefined;
        nodeImports.push(`${relative(ROOT, args.importer)} imports ${args.path}`);
        return { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    plugins: [recordNodeImports],
  });
  return { code: result.outputFiles[0]!.text, nodeImports };
}
