import { describe, expect, it } from 'vitest';
import {
  parseStatusCallback,
  twilioSignature,
  verifyTwilioSignature,
} from '../../../shared/providers/twilio/index.js';

const SID = `SM${'ab'.repeat(16)}`;
const aCallbackBody = (overrides: Record<string, string> = {}) =>
  new URLSearchParams({
    AccountSid: `AC${'0'.repeat(32)}`,
    MessageSid: SID,
    MessageStatus: 'delivered',
    ...overrides,
  });

describe('parseStatusCallback', () => {
  it('reads sid, normalised status and the client reference from the query', () => {
    // Prepare
    const body = aCallbackBody().toString();
    const query = `?client_reference=${encodeURIComponent('evt-1:sms:password_reset#2')}`;

    // Act
    const parsed = parseStatusCallback({ body, query });

    // Assess
    expect(parsed).toEqual({
      ok: true,
      value: {
        messageSid: SID,
        status: 'delivered',
        providerStatus: 'delivered',
        clientReference: 'evt-1:sms:password_reset#2',
        errorCode: null,
      },
    });
  });

  it('reads a failure with its error code, and falls back to the legacy Sms* names', () => {
    // Prepare: 30008 (unknown error) may have reached a carrier
    const body = new URLSearchParams({ SmsSid: SID, SmsStatus: 'failed', ErrorCode: '30008' }).toString();

    // Act
    const parsed = parseStatusCallback({ body, query: new URLSearchParams() });

    // Assess
    expect(parsed).toEqual({
      ok: true,
      value: {
        messageSid: SID,
        status: 'undelivered',
        providerStatus: 'failed',
        clientReference: null,
        errorCode: 30008,
        detail: 'twilio:30008',
      },
    });
  });

  it.each([
    ['30001', 'failed', 'not_sent'],
    ['30036', 'failed', 'not_sent'],
    ['30500', 'failed', 'not_sent'],
    ['12400', 'failed', 'not_sent'],
    ['30002', 'failed', 'not_sent_permanent'],
    ['21408', 'failed', 'not_sent_permanent'],
    ['30450', 'failed', 'not_sent_permanent'],
    ['30008', 'failed', 'undelivered'],
    // `undelivered` is the carrier's verdict: the message left Twilio, whatever the code.
    ['30036', 'undelivered', 'undelivered'],
  ] as const)(
    'reads ErrorCode %s with status %s as %s (Twilio: failed in its queue, never sent)',
    (code, status, expected) => {
      // Prepare
      const body = new URLSearchParams({
        MessageSid: SID,
        MessageStatus: status,
        ErrorCode: code,
      }).toString();

      // Act
      const parsed = parseStatusCallback({ body });

      // Assess
      expect(parsed).toMatchObject({
        ok: true,
        value: { status: expected, errorCode: Number(code), detail: `twilio:${code}` },
      });
    },
  );

  it('accepts a sid with uppercase hex digits (the OpenAPI sid pattern)', () => {
    // Prepare
    const upper = `SM${'ABCDEF0123456789'.repeat(2)}`;

    // Act
    const parsed = parseStatusCallback({ body: aCallbackBody({ MessageSid: upper }).toString() });

    // Assess
    expect(parsed).toMatchObject({ ok: true, value: { messageSid: upper } });
  });

  it.each([
    ['missing_message_sid', { MessageSid: '' }],
    ['invalid_message_sid', { MessageSid: 'SM-not-a-sid' }],
    ['missing_status', { MessageStatus: '' }],
  ] as const)('rejects a callback: %s', (reason, overrides) => {
    // Act
    const parsed = parseStatusCallback({ body: aCallbackBody(overrides).toString() });

    // Assess
    expect(parsed).toEqual({ ok: false, reason });
  });
});

describe('Twilio request signature', () => {
  // Twilio's documented example (auth token 12345), reproduced by every official helper library.
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = new URLSearchParams({
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  });

  it("reproduces Twilio's documented example", () => {
    // Act
    const signature = twilioSignature('12345', url, params);

    // Assess
    expect(signature).toBe('RSOYDt4T1cUTdK1PDd93/VVr8B8=');
  });

  it('verifies the genuine signature and rejects every tampered input', () => {
    // Prepare
    const genuine = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
    const tampered = new URLSearchParams(params);
    tampered.set('Digits', '9999');

    // Act + Assess
    expect(verifyTwilioSignature('12345', url, params, genuine)).toBe(true);
    expect(verifyTwilioSignature('54321', url, params, genuine)).toBe(false);
    expect(verifyTwilioSignature('12345', `${url}&x=1`, params, genuine)).toBe(false);
    expect(verifyTwilioSignature('12345', url, tampered, genuine)).toBe(false);
    expect(verifyTwilioSignature('12345', url, params, 'short')).toBe(false);
    expect(verifyTwilioSignature('12345', url, params, undefined)).toBe(false);
  });
});
