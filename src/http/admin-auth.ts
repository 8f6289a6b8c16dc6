import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether `presented` is the admin token (ADMIN_TOKEN): compared in constant time, digests having
 * equal length whatever was sent. The admin API and the operator's console sign-in both ask this.
 */
export function isAdminToken(presented: string, adminToken: string): boolean {
  return timingSafeEqual(digest(presented), digest(adminToken));
}

/** Refuses an admin API request that does not carry the admin token as a bearer token: MH_001. */
export function assertAdmin(request: FastifyRequest, adminToken: string): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (!match || !isAdminToken(match[1]!, adminToken)) {
    throw new AppError(
      'MH_001',
      'Invalid or missing admin token. Send `Authorization: Bearer <ADMIN_TOKEN>`.',
    );
  }
}
