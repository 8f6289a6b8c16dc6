import { fileURLToPath } from 'node:url';
import { type Address, address } from '@solana/kit';

/** The router program's address on the local chain (any cluster may deploy it elsewhere). */
export const ROUTER_PROGRAM_ADDRESS: Address = address('TRouterProgram11111111111111111111111111111');

/**
 * SBPF versions the program is built for; both are committed and tested. v0 loads on every
 * cluster; v3 needs a cluster that enabled SBPF v3 (LiteSVM accepts both).
 */
export type RouterProgramVariant = 'v0' | 'v3';

export const ROUTER_PROGRAM_VARIANTS: readonly RouterProgramVariant[] = ['v0', 'v3'];

/** Path of the committed program binary of a variant (built by `npm run build:program`). */
export function routerProgramPath(variant: RouterProgramVariant = 'v0'): string {
  return fileURLToPath(new URL(`../../../programs/router/build/router-${variant}.so`, import.meta.url));
}
