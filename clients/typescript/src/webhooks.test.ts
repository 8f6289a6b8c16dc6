import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateTestHeader, verifyWebhook, WebhookVerificationError } from './webhooks.ts';

const secret = 'whsec_c2VjcmV0LW9uZS0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFi';
const otherSecret = 'whsec_c2VjcmV0LXR3by0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiYw';
const body = JSON.stringify({
  id: 'evt_1',
  type: 'ping',
  createdAt: '2026-06-01T12:00:00.000Z',
  isTest: true,
  apiVersion: 'v1',
  data: { url: 'https://example.com/hooks' },
});
const t = 1_780_315_200; // 2026-06-01T12:00:00Z
const now = new Date(t * 1000);

const rejects = (fn: () => unknown, code: string) =>
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof WebhookVerificationError);
    assert.equal(error.code, code);
    assert.equal(error.name, 'WebhookVerificationError');
    return true;
  });

describe('verifyWebhook', () => {
  test('accepts a body signed with the secret and returns the parsed event', () => {
    const header = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
    assert.equal(generateTestHeader({ payload: body, secret, timestamp: t }), header);
    assert.deepEqual(verifyWebhook(body, header, secret, { now }), JSON.parse(body));
    assert.deepEqual(verifyWebhook(Buffer.from(body), [header], secret, { now }), JSON.parse(body));
  });

  test('any of several v1 values may match, in any order, and several secrets may be tried', () => {
    const both = generateTestHeader({ payload: body, secret: [otherSecret, secret], timestamp: t });
    assert.match(both, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhook(body, both, secret, { now }).id, 'evt_1');
    assert.equal(verifyWebhook(body, both, otherSecret, { now }).id, 'evt_1');
    const onlyOld = generateTestHeader({ payload: body, secret: otherSecret, timestamp: t });
    assert.equal(verifyWebhook(body, onlyOld, [secret, otherSecret], { now }).id, 'evt_1');
    // Unknown schemes and spaces are ignored.
    assert.equal(verifyWebhook(body, ` v0=abc, ${both.replaceAll(',', ', ')}`, secret, { now }).id, 'evt_1');
  });

  test('rejects a changed body, a wrong secret or a truncated signature', () => {
    const header = generateTestHeader({ payload: body, secret, timestamp: t });
    rejects(
      () => verifyWebhook(body.replace('evt_1', 'evt_2'), header, secret, { now }),
      'signature_mismatch',
    );
    rejects(() => verifyWebhook(body, header, otherSecret, { now }), 'signature_mismatch');
    rejects(() => verifyWebhook(body, header.slice(0, -2), secret, { now }), 'signature_mismatch');
    rejects(() => verifyWebhook(`${body} `, header, secret, { now }), 'signature_mismatch');
  });

  test('tolerance: 300 s either way by default, configurable', () => {
    const header = generateTestHeader({ payload: body, secret, timestamp: t });
    assert.ok(verifyWebhook(body, header, secret, { now: new Date((t + 300) * 1000) }));
    assert.ok(verifyWebhook(body, header, secret, { now: new Date((t - 300) * 1000) }));
    rejects(
      () => verifyWebhook(body, header, secret, { now: new Date((t + 301) * 1000) }),
      'timestamp_outside_tolerance',
    );
    rejects(
      () => verifyWebhook(body, header, secret, { now: new Date((t - 301) * 1000) }),
      'timestamp_outside_tolerance',
    );
    assert.ok(
      verifyWebhook(body, header, secret, { now: new Date((t + 3600) * 1000), toleranceSeconds: 3600 }),
    );
  });

  test('missing or malformed headers and non-JSON bodies have their own codes', () => {
    rejects(() => verifyWebhook(body, undefined, secret), 'missing_signature');
    rejects(() => verifyWebhook(body, '', secret), 'missing_signature');
    rejects(() => verifyWebhook(body, 'v1=abc', secret), 'malformed_signature');
    rejects(() => verifyWebhook(body, `t=${t}`, secret), 'malformed_signature');
    rejects(() => verifyWebhook(body, `t=soon,v1=${'0'.repeat(64)}`, secret), 'malformed_signature');
    rejects(() => verifyWebhook(body, `t=${t},t=${t},v1=${'0'.repeat(64)}`, secret), 'malformed_signature');
    const text = 'not json';
    const header = generateTestHeader({ payload: text, secret, timestamp: t });
    rejects(() => verifyWebhook(text, header, secret, { now }), 'invalid_payload');
    assert.throws(() => verifyWebhook(body, header, ''), TypeError);
  });
});
