import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ConsoleCaller } from './session.ts';

const require = createRequire(import.meta.url);
const HTMX_VERSION = (require('htmx.org/package.json') as { version: string }).version;
/** The folder of htmx's built files, in node_modules. */
export const HTMX_DIR = join(dirname(require.resolve('htmx.org/package.json')), 'dist');
/** Where the console serves htmx: its version in the path, so browsers may keep it for good. */
export const HTMX_PREFIX = `/vendor/htmx.org@${HTMX_VERSION}/`;

/** The console's sections, in the order the header lists them. */
const NAV = [
  { key: 'transfers', href: '/dashboard/transfers', label: 'Transfers' },
  { key: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks' },
  { key: 'usage', href: '/dashboard/usage', label: 'Usage' },
  { key: 'earnings', href: '/dashboard/earnings', label: 'Earnings' },
] as const;

export type Section = (typeof NAV)[number]['key'];

/**
 * The data every page's layout reads, with the page's own: who is signed in (integration and
 * mode, or nobody), the navigation with the current section, and where htmx is served.
 */
export function pageData<T extends { title: string }>(
  caller: ConsoleCaller | null,
  data: T,
  section?: Section,
) {
  return {
    ...data,
    caller: caller
      ? { name: caller.integrationName, mode: caller.auth.mode, isTest: caller.auth.isTest }
      : null,
    nav: NAV.map((item) => ({ ...item, current: item.key === section })),
    htmx: `/dashboard${HTMX_PREFIX}htmx.min.js`,
  };
}
