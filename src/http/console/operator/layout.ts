import { HTMX_PREFIX } from '../layout.ts';

/** The operator's sections, in the order the header lists them. */
const OPERATOR_NAV = [
  { key: 'integrations', href: '/dashboard/operator/integrations', label: 'Integrations' },
  { key: 'platform', href: '/dashboard/operator/platform', label: 'Platform' },
  { key: 'keeper', href: '/dashboard/operator/keeper', label: 'Keeper' },
] as const;

export type OperatorSection = (typeof OPERATOR_NAV)[number]['key'];

/** Where the operator's pages start. */
export const OPERATOR_HOME = '/dashboard/operator/integrations';

/**
 * The data the console's layout reads for an operator's page, with the page's own: the operator's
 * header (its navigation with the current section once signed in) instead of an integration's.
 */
export function operatorPageData<T extends { title: string }>(
  signedIn: boolean,
  data: T,
  section?: OperatorSection,
) {
  return {
    ...data,
    caller: null,
    operator: {
      signedIn,
      nav: OPERATOR_NAV.map((item) => ({ ...item, current: item.key === section })),
    },
    htmx: `/dashboard${HTMX_PREFIX}htmx.min.js`,
  };
}
