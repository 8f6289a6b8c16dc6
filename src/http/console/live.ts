import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import stringify from 'safe-stable-stringify';

/*
 * How a live part of a page refreshes: htmx asks the page's URL again every 2 s, naming the
 * version of what it shows; while nothing changed the answer is 204, which htmx leaves unswapped,
 * so a keyboard or screen-reader user's place in the page is kept and nothing is sent.
 */

/** A short digest of what a live part shows. */
export function contentVersion(shown: unknown): string {
  return createHash('sha256')
    .update(stringify(shown) ?? '')
    .digest('base64url')
    .slice(0, 16);
}

/** Whether the request is htmx refreshing a live part (it then gets the part alone). */
export function isRefresh(request: FastifyRequest): boolean {
  return request.headers['hx-request'] === 'true';
}

/** Whether the request is a refresh of a live part that still shows `version`. */
export function isUnchanged(request: FastifyRequest, version: string): boolean {
  return isRefresh(request) && (request.query as Record<string, unknown>).v === version;
}

/** The URL a live part refreshes from: this request's, naming the version it shows. */
export function refreshUrl(request: FastifyRequest, version: string): string {
  const url = new URL(request.url, 'http://console');
  url.searchParams.set('v', version);
  return `${url.pathname}${url.search}`;
}
