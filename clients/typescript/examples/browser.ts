// A wallet's front end: the transfer is created, signed and broadcast from the browser, by the
// user's own wallet. The page reaches the API through your backend, which passes the calls on with
// the API key added (never hand the key to a browser); the chain's RPC endpoint answers the page
// directly (providers allow cross-origin calls). Bundle it with the rest of your front end
// (esbuild, Vite, webpack): the client's main entry imports no Node.js module.
import { createSolanaRpc, type TransactionPartialSigner } from '@solana/kit';
import {
  type BroadcastProgress,
  type CreateTransferRequest,
  createTransferRouterClient,
  signAndBroadcastBundle,
} from '../src/index.ts';

/** Creates a transfer from `wallet` and deploys its route: the wallet signs and sends the bundle. */
export async function sendFromWallet(
  endpoints: { backend: string; rpc: string },
  wallet: TransactionPartialSigner,
  order: Omit<CreateTransferRequest, 'sourceOwner'>,
  onProgress?: (progress: BroadcastProgress) => void,
) {
  // No apiKey: your backend adds it to each call it passes on to the service.
  const client = createTransferRouterClient({ baseUrl: endpoints.backend });
  const quote = await client.createTransfer({ ...order, sourceOwner: wallet.address });
  // Resolves once every transaction is confirmed on chain and reported: the route is deployed.
  return signAndBroadcastBundle(client, {
    transferId: quote.id,
    signer: wallet,
    rpc: createSolanaRpc(endpoints.rpc),
    ...(onProgress ? { onProgress } : {}),
  });
}
