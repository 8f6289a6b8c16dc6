import { z } from 'zod';
import type { KeyMode } from './api-keys.ts';
import { type FeeScheduleOverrides, feeScheduleOverridesSchema } from './fees.ts';
import { MIN_CLAIM_FLOOR_LAMPORTS } from './rewards.ts';

/** An integration's name, as an operator gives it: 1 to 100 characters once trimmed. */
export const integrationName = z.string().trim().min(1).max(100);

/**
 * What an operator can set per integration. Only overrides are stored; {@link resolveSettings}
 * applies the defaults when the integration is read, so a changed default reaches everyone who
 * did not override it.
 */
export const integrationSettingsSchema = z
  .object({
    defaultHops: z
      .int()
      .min(3)
      .max(10)
      .optional()
      .describe('Hops used when a create request omits them (default 7).'),
    defaultArrivalSeconds: z
      .int()
      .min(60)
      .max(7 * 24 * 3600)
      .optional()
      .describe('Arrival delay used when a create request omits it (default 600).'),
    rateLimitMultiplier: z
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe('Multiplies every per-endpoint rate limit of this integration (default 1).'),
    minimumClaimLamports: z
      .int()
      .min(Number(MIN_CLAIM_FLOOR_LAMPORTS))
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe('Least claimable lamports of a reward claim (default REWARDS_MIN_CLAIM_LAMPORTS).'),
    fees: feeScheduleOverridesSchema
      .optional()
      .describe(
        'Overrides of the deployment fee schedule: tiers, flatFeeLamportsPerHop, integratorShareBps, minUsd.',
      ),
  })
  .strict();

export type IntegrationSettingsInput = z.infer<typeof integrationSettingsSchema>;

export const DEFAULT_INTEGRATION_SETTINGS = {
  defaultHops: 7,
  defaultArrivalSeconds: 600,
  rateLimitMultiplier: 1,
} as const;

export type IntegrationSettings = {
  defaultHops: number;
  defaultArrivalSeconds: number;
  rateLimitMultiplier: number;
  /** Overrides the deployment's minimum of a reward claim when set. */
  minimumClaimLamports?: number;
  fees: FeeScheduleOverrides;
};

export type IntegrationStatus = 'active' | 'suspended';

/** The owner of an object: an integration in one mode. Every read and write is scoped by it. */
export interface Owner {
  integrationId: number;
  mode: KeyMode;
}

/** The effective settings: stored overrides on top of the defaults. */
export function resolveSettings(stored: IntegrationSettingsInput): IntegrationSettings {
  return { ...DEFAULT_INTEGRATION_SETTINGS, fees: {}, ...stripUndefined(stored) };
}

/** Merges a partial update into stored overrides; `null` removes an override. */
export function mergeSettings(
  stored: IntegrationSettingsInput,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
