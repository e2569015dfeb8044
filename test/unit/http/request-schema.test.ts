import { describe, expect, it } from 'vitest';
import {
  fieldErrors,
  IdempotencyKeyHeader,
  NotificationRequestBody,
} from '../../../shared/http/request-schema.js';

function aBody(overrides: Record<string, unknown> = {}) {
  return {
    event_id: 'evt-1',
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    destination: { phone: '+14155550123' },
    expires_at: '2026-11-29T23:10:00Z',
    params: { code: '483920' },
    ...overrides,
  };
}

describe('NotificationRequestBody', () => {
  it('accepts a valid body and defaults the locale', () => {
    const { locale: _omit, ...body } = aBody();
    const parsed = NotificationRequestBody.safeParse(body);
    expect(parsed.success).toBe(true);
    expect(parsed.data?.locale).toBe('en');
  });

  it.each([
    ['+14155550123', '+14155550123'],
    ['+442071838750', '+442071838750'],
    ['+4915112345678', '+4915112345678'],
    ['+1 415 555 0123', '+14155550123'],
    ['+330612345678', '+33612345678'],
    ['14155550123', undefined],
    ['+1415555012', undefined],
    ['+0123456789', undefined],
    ['', undefined],
  ])('phone %s is %s (canonical E.164, or refused)', (phone, canonical) => {
    const parsed = NotificationRequestBody.safeParse(aBody({ destination: { phone } }));
    expect(parsed.data?.destination.phone).toBe(canonical);
  });

  it.each([
    [{ code: '483920' }, true],
    [{ code: '1234' }, true],
    [{ code: '123' }, false],
    [{ code: '12345678901' }, false],
    [{ code: '48a920' }, false],
    [{ reset_url: 'https://id.example.com/r?t=abc' }, true],
    [{ reset_url: 'http://id.example.com/r' }, false],
    [{ reset_url: 'javascript:alert(1)' }, false],
    [{ code: '483920', reset_url: 'https://id.example.com/r' }, false],
    [{}, false],
    [{ code: '483920', extra: 'x' }, false],
  ])('params %j valid=%s', (params, valid) => {
    expect(NotificationRequestBody.safeParse(aBody({ params })).success).toBe(valid);
  });

  it.each([
    ['2026-11-29T23:10:00Z', true],
    ['2026-11-29T23:10:00.123+01:00', true],
    ['2026-11-29T23:10:00', false],
    ['2026-11-29', false],
    ['tomorrow', false],
  ])('expires_at %s valid=%s', (expires_at, valid) => {
    expect(NotificationRequestBody.safeParse(aBody({ expires_at })).success).toBe(valid);
  });

  it('rejects unknown channels, templates, locales and top-level fields', () => {
    for (const overrides of [
      { channel: 'email' },
      { template: 'welcome' },
      { locale: 'xx' },
      { note: 'hi' },
    ]) {
      expect(NotificationRequestBody.safeParse(aBody(overrides)).success).toBe(false);
    }
  });

  it('reports dotted paths and never echoes the rejected value', () => {
    const parsed = NotificationRequestBody.safeParse(aBody({ destination: { phone: '+1999' } }));
    expect(parsed.success).toBe(false);
    const errors = parsed.success ? [] : fieldErrors(parsed.error);
    expect(errors.map((e) => e.path)).toContain('destination.phone');
    expect(JSON.stringify(errors)).not.toContain('+1999');
  });
});

describe('IdempotencyKeyHeader', () => {
  it.each([
    ['reset-4711', true],
    ['sms:password_reset:abc.def_1', true],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['has space', false],
    ['ünïcode', false],
    ['', false],
  ])('%s valid=%s', (key, valid) => {
    expect(IdempotencyKeyHeader.safeParse(key).success).toBe(valid);
  });
});
