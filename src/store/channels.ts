/**
 * The PostgreSQL NOTIFY channels the service uses, in one place: writers notify on commit, and
 * listeners in every process act on them.
 */

/** A key or integration changed: every process drops its cached API keys. */
export const AUTH_CHANGED_CHANNEL = 'tr_auth_changed';

/** Webhook deliveries became due: delivery workers wake without waiting for their poll. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/** A route was taken over: keeper workers look for work without waiting for their next round. */
export const KEEPER_CHANNEL = 'tr_keeper_work';
