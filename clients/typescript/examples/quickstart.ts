// From an API key to a completed transfer: native SOL from a fresh wallet to a fresh recipient on
// the chain `npm start` runs (its faucet funds the wallet). Run it with the key `npm start` printed:
//   TRANSFER_ROUTER_KEY=mh_test_... npx node clients/typescript/examples/quickstart.ts
import {
  airdropFactory,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  generateKeyPairSigner,
  lamports,
} from '@solana/kit';
import {
  createTransferRouterClient,
  reclaimRent,
  signAndBroadcastBundle,
  waitForTransfer,
} from '../src/index.ts';

const rpcUrl = process.env.SOLANA_RPC_URL ?? 'http://127.0.0.1:8899';
const rpc = createSolanaRpc(rpcUrl);
const rpcSubscriptions = createSolanaRpcSubscriptions(rpcUrl.replace(/^http/, 'ws'));

// The API key stays on your backend.
const client = createTransferRouterClient({
  baseUrl: process.env.TRANSFER_ROUTER_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.TRANSFER_ROUTER_KEY ?? '',
});

// The user's wallet: any @solana/kit signer. Here a fresh keypair, funded by the local faucet.
const wallet = await generateKeyPairSigner();
await airdropFactory({ rpc, rpcSubscriptions })({
  recipientAddress: wallet.address,
  lamports: lamports(2_000_000_000n),
  commitment: 'confirmed',
});

// 1. What it costs, then a quote priced for 15 minutes.
const terms = { tokenMint: 'So11111111111111111111111111111111111111112', amountRaw: '500000000', hops: 3 };
const estimate = await client.estimateTransfer(terms);
console.log(
  `the recipient gets ${estimate.tokens.netDeliveredRaw} lamports;`,
  `the wallet spends at most ${estimate.sol.requiredSolUpFrontLamports} more up front`,
);
const quote = await client.createTransfer({
  ...terms,
  amountTokens: '0.5',
  sourceOwner: wallet.address,
  recipientWallet: (await generateKeyPairSigner()).address,
  arrivalSeconds: 60,
});

// 2. Prepare, sign each transaction with the wallet, send the groups in order (each landed as the
// service lands its own: the same bytes sent again until confirmed), report them (both confirm
// calls); a blockhash that expires on the way means a fresh bundle from prepare.
const { transfer } = await signAndBroadcastBundle(client, {
  transferId: quote.id,
  signer: wallet,
  rpc,
});
console.log(`transfer ${transfer.id} is ${transfer.status}`);

// 3. The keeper runs the hops on schedule; follow them until the recipient is paid.
const done = await waitForTransfer(client, quote.id, {
  until: 'completed',
  onUpdate: (update) => console.log(`hop ${update.progress.hopsCompleted} of ${update.progress.hopsTotal}`),
});
console.log(`completed at ${done.completedAt}`);

// 4. The route's accounts still hold their rent, and the keeper what it did not spend: the wallet
// signs the reclaim bundle and gets it back (the estimate's refundableLamports).
const reclaimed = await reclaimRent(client, { transferId: quote.id, signer: wallet, rpc });
console.log(`transfer ${reclaimed.transfer.id} is ${reclaimed.transfer.phase}`);
