/**
 * Issue 25 item 2 against DynamoDB Local: spellings of one number share one destination budget
 * and one fingerprint, and the same key with the same payload in another spelling is a replay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_GUARD_PREFIX } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { ADMISSION_LOG_ATTRIBUTE } from '../../shared/domain/budgets.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody } from '../support/fixtures.js';
import { ManualClock } from '../support/manual-clock.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  // Two SMS per 15 minutes to one number.
  api = await startApiHarness({ clock, env: { DESTINATION_LIMITS: '2/15m' } });
});
afterAll(async () => {
  await api.stop();
});

/** The budget counter items (not the event guards, which are limit items too). */
async function budgetCounters() {
  const items = await api.scan();
  return items.filter(
    (i) =>
      i[TableSchema.sortKey] === TableSchema.counterSortKey &&
      !String(i[TableSchema.partitionKey]).startsWith(EVENT_GUARD_PREFIX),
  );
}

describe('one number, one spelling (DynamoDB Local)', () => {
  it('three spellings of one French mobile share one budget of 2: the third is 429', async () => {
    // Prepare: the canonical form, the trunk prefix kept, and a formatted national spelling.
    const spellings = ['+33612345679', '+330612345679', '+33 (0)6 12 34 56 79'];
    // Act
    const responses = [];
    for (const phone of spellings) {
      const response = await api.post(aRequestBody({ destination: { phone } }, clock.now()));
      responses.push({ status: response.status, body: (await response.json()) as Record<string, unknown> });
    }
    // Assess
    expect(responses.map((r) => r.status)).toEqual([202, 202, 429]);
    expect(responses[1]?.body.destination_fingerprint).toBe(responses[0]?.body.destination_fingerprint);
    expect(responses[2]?.body.code).toBe('destination_rate_limited');
    // One counter item: one number, two admissions in its log.
    const counters = await budgetCounters();
    expect(counters).toHaveLength(1);
    expect(counters[0]?.[ADMISSION_LOG_ATTRIBUTE]).toHaveLength(2);
  });

  it('the same key and payload in another spelling is a replay (200), not a conflict', async () => {
    // Prepare
    const body = aRequestBody({ destination: { phone: '+61412345670' } }, clock.now());
    const headers = { 'idempotency-key': `spelling-${Date.now()}` };
    const first = await api.post(body, headers);
    // Act
    const again = await api.post({ ...body, destination: { phone: '+61 (0)412 345 670' } }, headers);
    // Assess
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(api.errors).toEqual([]);
  });
});
