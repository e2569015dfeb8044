import { describe, expect, it } from 'vitest';
import { RECORD_ATTRIBUTES } from '../../../shared/adapters/dynamodb/item-mapping.js';
import {
  createTableInput,
  INDEXED_RECORD_ATTRIBUTES,
  STRONG_READ_ONLY_ATTRIBUTES,
} from '../../../shared/adapters/dynamodb/schema.js';

describe('index projections', () => {
  it('cover every record attribute the mapping reads except the strong-read-only ones', () => {
    const mapped = [...Object.values(RECORD_ATTRIBUTES), 'provider_name', 'provider_message_id'].sort();
    expect([...INDEXED_RECORD_ATTRIBUTES, ...STRONG_READ_ONLY_ATTRIBUTES].sort()).toEqual(mapped);
  });

  it('never carry the sealed payload or the TTL', () => {
    for (const index of createTableInput('t').GlobalSecondaryIndexes) {
      expect(index.Projection.ProjectionType).toBe('INCLUDE');
      expect(index.Projection.NonKeyAttributes).not.toContain('sealed_payload');
      const keys = index.KeySchema.map((k) => k.AttributeName);
      for (const key of keys) expect(index.Projection.NonKeyAttributes).not.toContain(key);
    }
  });
});
