import { describe, expect, it } from 'vitest';
import { CorruptItemError } from '../../../shared/adapters/dynamodb/errors.js';
import { recordAttributes, recordFromItem } from '../../../shared/adapters/dynamodb/item-mapping.js';
import { aSentRecord } from '../domain/fixtures.js';

const key = { pk: 'sms:password_reset:evt-1', sk: 'CMD' };

describe('attempt_messages on the command item', () => {
  it('round-trips every attempt’s message id and its not-sent mark', () => {
    // Prepare
    const record = aSentRecord({
      attempts: 2,
      attemptMessages: [
        { attempt: 1, messageId: 'SM-1', notSent: true },
        { attempt: 2, messageId: 'SM-2' },
      ],
    });

    // Act
    const read = recordFromItem({ ...key, ...recordAttributes(record) });

    // Assess
    expect(read.attemptMessages).toEqual(record.attemptMessages);
  });

  it('is absent on a record that learnt no message (and on items written before the field)', () => {
    const read = recordFromItem({ ...key, ...recordAttributes(aSentRecord()) });
    expect('attemptMessages' in read).toBe(false);
  });

  it('a malformed entry makes the item corrupt, never a guessed attribution', () => {
    const item = { ...key, ...recordAttributes(aSentRecord()), attempt_messages: [{ attempt: '1' }] };
    expect(() => recordFromItem(item)).toThrow(CorruptItemError);
  });
});
