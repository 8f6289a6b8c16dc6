// What the command-line tools (`npm run admin`, `npm run demo`) read from the environment. Unlike
// the service's configuration (config.ts), nothing here is required or validated up front: flags
// override each value, and each tool checks what it uses.
import { resolve } from 'node:path';
import { DEFAULT_DATA_DIR } from './config.ts';

/**
 * What the admin CLI needs (flags override these): the admin token, the data directory, and where
 * the service is when the environment says so (`TRANSFER_ROUTER_URL`, or `PORT` with `HOST`), named
 * by the variable that said it; otherwise the CLI asks the data directory, then tries `defaultUrl`.
 * `platform deploy` talks to the chain itself, with the service's own chain settings; `npm run demo`
 * uses these too.
 */
export function loadCliDefaults(env: Record<string, string | undefined> = process.env) {
  const host = env.HOST && env.HOST !== '0.0.0.0' ? env.HOST : '127.0.0.1';
  const at = (port: string) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: env.TRANSFER_ROUTER_URL
      ? { url: env.TRANSFER_ROUTER_URL, from: 'TRANSFER_ROUTER_URL' }
      : env.PORT
        ? { url: at(env.PORT), from: 'PORT' }
        : undefined,
    defaultUrl: at('8080'),
    adminToken: env.ADMIN_TOKEN,
    dataDir: resolve(env.DATA_DIR ?? DEFAULT_DATA_DIR),
    rpcUrl: env.RPC_URL,
    /** PLATFORM_ADMIN_KEYPAIR as written (a keygen JSON array or a path), parsed where it is used. */
    adminKeypair: env.PLATFORM_ADMIN_KEYPAIR,
    routerProgramId: env.ROUTER_PROGRAM_ID,
    /** LOCAL_CHAIN_PROFILE and LOCAL_CHAIN_SEED as written, for `npm run demo` to check against the running chain's. */
    localChainProfile: env.LOCAL_CHAIN_PROFILE || undefined,
    localChainSeed: env.LOCAL_CHAIN_SEED || undefined,
  };
}
