import { describe, expect, it } from 'vitest';
import type { DispatchQueue } from '../../../shared/ports/queue.js';
import {
  type ChangeRecord,
  dispatchMessageFor,
  forwardChanges,
} from '../../../shared/usecases/forward-stream.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

function command(overrides: Record<string, unknown> = {}) {
  return {
    pk: 'k1',
    sk: 'CMD',
    idempotency_key: 'k1',
    state: 'accepted',
    version: 1,
    next_attempt_at: NOW,
    ...overrides,
  };
}

function change(overrides: Partial<ChangeRecord> = {}): ChangeRecord {
  return { id: '100', eventName: 'INSERT', newImage: command(), ...overrides };
}

describe('dispatchMessageFor', () => {
  it('forwards an inserted accepted command, key only', () => {
    expect(dispatchMessageFor(change(), NOW)).toEqual({ idempotencyKey: 'k1', version: 1, delaySeconds: 0 });
  });

  it('forwards a modification into accepted with the backoff as delay', () => {
    const message = dispatchMessageFor(
      change({
        eventName: 'MODIFY',
        oldImage: command({ state: 'dispatching', version: 2 }),
        newImage: command({ version: 3, next_attempt_at: NOW + 4_200 }),
      }),
      NOW,
    );
    expect(message).toEqual({ idempotencyKey: 'k1', version: 3, delaySeconds: 5 });
  });

  it.each<[string, Partial<ChangeRecord>]>([
    ['an evidence item', { newImage: { pk: 'k1', sk: 'EV#000000002', to_state: 'accepted' } }],
    ['a command in another state', { eventName: 'MODIFY', newImage: command({ state: 'sent', version: 4 }) }],
    [
      'a reschedule (accepted, same version)',
      { eventName: 'MODIFY', oldImage: command({ due_at: 1 }), newImage: command({ due_at: 2 }) },
    ],
    ['a TTL removal', { eventName: 'REMOVE', newImage: undefined as never, oldImage: command() }],
  ])('ignores %s', (_what, overrides) => {
    const record: ChangeRecord = { ...change(), ...overrides };
    expect(dispatchMessageFor(record, NOW)).toBeUndefined();
  });
});

describe('forwardChanges', () => {
  it('reports the ids the queue could not take and counts the ignored', async () => {
    // Prepare
    const sent: string[] = [];
    const queue: DispatchQueue = {
      async enqueue(messages) {
        sent.push(...messages.map((m) => m.message.idempotencyKey));
        return { failed: messages.filter((m) => m.id === '2').map((m) => m.id) };
      },
    };
    const changes = [
      change({ id: '1', newImage: command({ idempotency_key: 'a' }) }),
      change({ id: '2', newImage: command({ idempotency_key: 'b' }) }),
      change({ id: '3', newImage: { pk: 'c', sk: 'EV#000000001' } }),
    ];
    // Act
    const report = await forwardChanges(queue, changes, NOW);
    // Assess
    expect(sent).toEqual(['a', 'b']);
    expect(report).toEqual({ forwarded: 1, ignored: 1, failedIds: ['2'] });
  });
});
