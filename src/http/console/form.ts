import { randomBytes } from 'node:crypto';

/*
 * Reading the console's form posts (application/x-www-form-urlencoded, parsed by
 * @fastify/formbody): every field is text, a field may be sent twice or not at all.
 */

/** A form field's text: the first value when a field was sent twice, '' when absent. */
export function formField(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** Every value of a field sent once per checked box ([] when none was). */
export function formFields(body: unknown, name: string): string[] {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((item): item is string => typeof item === 'string');
}

/**
 * A fresh key for a form whose action must happen once however often it is sent (a double click,
 * a reload of the answer): the action's use case answers the same outcome to the same key.
 */
export function formRequestKey(): string {
  return `console-${randomBytes(12).toString('base64url')}`;
}

/** A page number from a query string: 1 unless a positive whole number up to 10,000 was given. */
export function pageNumber(query: unknown, name = 'page'): number {
  const text = formField(query, name);
  return /^[1-9]\d{0,3}$/.test(text) ? Number(text) : 1;
}
