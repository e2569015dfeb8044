import { describe, expect, it } from 'vitest';
import { CorruptItemError } from '../../../shared/adapters/dynamodb/errors.js';
import { recordAttributes, recordFromItem } from '../../../shared/adapters/dynamodb/item-mapping.js';
import { aSentRecord } from '../domain/fixtures.js';

const key = { pk: 'sms:password_reset:evt-1', sk: 'CMD' };

describe('attempt_providers on the command item', () => {
  it('round-trips which provider each attempt went to', () => {
    // Prepare
    const record = aSentRecord({
      attempts: 2,
      provider: { name: 'eum', messageId: 'EUM-2' },
      attemptProviders: [
        { attempt: 1, provider: 'twilio', refusedAccount: true },
        { attempt: 2, provider: 'eum' },
      ],
    });

    // Act
    const read = recordFromItem({ ...key, ...recordAttributes(record) });

    // Assess
    expect(read.attemptProviders).toEqual(record.attemptProviders);
  });

  it('is absent on a single-provider record (and on items written before the field)', () => {
    // Act
    const read = recordFromItem({ ...key, ...recordAttributes(aSentRecord()) });
    // Assess
    expect('attemptProviders' in read).toBe(false);
  });

  it('a malformed entry makes the item corrupt, never a guessed provider', () => {
    // Prepare
    const item = { ...key, ...recordAttributes(aSentRecord()), attempt_providers: [{ attempt: 1 }] };
    // Act / Assess
    expect(() => recordFromItem(item)).toThrow(CorruptItemError);
  });
});
