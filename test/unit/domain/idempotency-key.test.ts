import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveIdempotencyKey, IDEMPOTENCY_KEY_PATTERN } from '../../../shared/domain/idempotency-key.js';

const eventId = fc.string({ minLength: 1, maxLength: 200 });
const template = fc.stringMatching(/^[a-z][a-z0-9_]{0,40}$/);

describe('deriveIdempotencyKey', () => {
  it('is deterministic', () => {
    fc.assert(
      fc.property(eventId, template, (event, tpl) => {
        // Act
        const first = deriveIdempotencyKey(event, 'sms', tpl);
        const second = deriveIdempotencyKey(`${event}`, 'sms', `${tpl}`);

        // Assess
        expect(second).toBe(first);
      }),
      { numRuns: 1000 },
    );
  });

  it('always matches IDEMPOTENCY_KEY_PATTERN, whatever the event id holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), template, (event, tpl) => {
        // Act
        const key = deriveIdempotencyKey(event, 'sms', tpl);

        // Assess
        expect(key).toMatch(IDEMPOTENCY_KEY_PATTERN);
        expect(key.startsWith(`sms:${tpl}:`)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('differs per event, per channel and per template', () => {
    fc.assert(
      fc.property(eventId, eventId, template, template, (e1, e2, t1, t2) => {
        // Prepare
        fc.pre(e1 !== e2 && t1 !== t2);

        // Act
        const key = deriveIdempotencyKey(e1, 'sms', t1);

        // Assess
        expect(deriveIdempotencyKey(e2, 'sms', t1)).not.toBe(key);
        expect(deriveIdempotencyKey(e1, 'email', t1)).not.toBe(key);
        expect(deriveIdempotencyKey(e1, 'sms', t2)).not.toBe(key);
      }),
      { numRuns: 1000 },
    );
  });

  it('is not fooled by moving characters between fields', () => {
    // Act
    const a = deriveIdempotencyKey('evt:1', 'sms', 'reset');
    const b = deriveIdempotencyKey('evt', 'sms', '1:reset');

    // Assess
    expect(a).not.toBe(b);
  });
});

describe('IDEMPOTENCY_KEY_PATTERN', () => {
  it.each(['a', 'A-Z_0.9:x', 'k'.repeat(255)])('accepts %s', (key) => {
    expect(IDEMPOTENCY_KEY_PATTERN.test(key)).toBe(true);
  });

  it.each(['', 'k'.repeat(256), 'has space', 'slash/no', 'hash#no', 'unicodé', 'new\nline'])(
    'rejects %j',
    (key) => {
      expect(IDEMPOTENCY_KEY_PATTERN.test(key)).toBe(false);
    },
  );
});
