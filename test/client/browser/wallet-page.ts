// The script of the page browser.test.ts serves: a wallet's front end that holds its key in the
// page (a keypair @solana/kit generates with the browser's WebCrypto) and sends a transfer with the
// client's browser example. The test drives it through `globalThis.wallet`.
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { sendFromWallet } from '../../../clients/typescript/examples/browser.ts';
import type { CreateTransferRequest } from '../../../clients/typescript/src/index.ts';

const signer = await generateKeyPairSigner();

/** What the test reaches in the page. */
export interface WalletPage {
  address: Address;
  /** Sends `order` from the page's wallet; answers the result and the progress kinds in order. */
  send(
    endpoints: { backend: string; rpc: string },
    order: Omit<CreateTransferRequest, 'sourceOwner'>,
  ): Promise<{ result: Awaited<ReturnType<typeof sendFromWallet>>; progress: string[] }>;
}

const wallet: WalletPage = {
  address: signer.address,
  async send(endpoints, order) {
    const progress: string[] = [];
    const result = await sendFromWallet(endpoints, signer, order, (event) => {
      progress.push('group' in event ? `${event.kind}:${event.group}` : event.kind);
    });
    return { result, progress };
  },
};
Object.assign(globalThis, { wallet });
