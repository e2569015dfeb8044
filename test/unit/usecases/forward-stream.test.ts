import { describe, expect, it } from 'vitest';
import { commandImageOf } from '../../../shared/adapters/dynamodb/stream-image.js';
import type { CommandImage } from '../../../shared/domain/dispatch-trigger.js';
import type { DispatchQueue } from '../../../shared/ports/queue.js';
import {
  type ChangeRecord,
  dispatchMessageFor,
  forwardChanges,
} from '../../../shared/usecases/forward-stream.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

function command(overrides: Partial<CommandImage> = {}): CommandImage {
  return { idempotencyKey: 'k1', state: 'accepted', version: 1, nextAttemptAt: NOW, ...overrides };
}

function change(overrides: Partial<ChangeRecord> = {}): ChangeRecord {
  return { id: '100', eventName: 'INSERT', after: command(), ...overrides };
}

describe('dispatchMessageFor', () => {
  it('forwards an inserted accepted command, key only', () => {
    expect(dispatchMessageFor(change(), NOW)).toEqual({ idempotencyKey: 'k1', version: 1, delaySeconds: 0 });
  });

  it('forwards a modification into accepted with the backoff as delay', () => {
    const message = dispatchMessageFor(
      change({
        eventName: 'MODIFY',
        before: command({ state: 'dispatching', version: 2 }),
        after: command({ version: 3, nextAttemptAt: NOW + 4_200 }),
      }),
      NOW,
    );
    expect(message).toEqual({ idempotencyKey: 'k1', version: 3, delaySeconds: 5 });
  });

  it.each<[string, Partial<ChangeRecord>]>([
    ['no command after the change (an evidence item, an unreadable image)', { after: undefined as never }],
    ['a command in another state', { eventName: 'MODIFY', after: command({ state: 'sent', version: 4 }) }],
    ['a reschedule (accepted, same version)', { eventName: 'MODIFY', before: command(), after: command() }],
    ['a TTL removal', { eventName: 'REMOVE', after: undefined as never, before: command() }],
  ])('ignores %s', (_what, overrides) => {
    const record = { ...change(), ...overrides } as ChangeRecord;
    expect(dispatchMessageFor(record, NOW)).toBeUndefined();
  });
});

describe("commandImageOf (the DynamoDB adapter's stream reader)", () => {
  it('reads a command item and nothing else', () => {
    // Prepare
    const commandItem = {
      pk: { S: 'k1' },
      sk: { S: 'CMD' },
      idempotency_key: { S: 'k1' },
      state: { S: 'accepted' },
      version: { N: '3' },
      next_attempt_at: { N: String(NOW) },
    };
    // Act / Assess
    expect(commandImageOf(commandItem)).toEqual(command({ version: 3 }));
    expect(commandImageOf({ ...commandItem, sk: { S: 'EV#000000002' } })).toBeUndefined();
    expect(commandImageOf({ ...commandItem, state: { S: 'from_the_future' } })).toBeUndefined();
    expect(
      commandImageOf({ pk: { S: '_control#reconciler' }, sk: { S: 'CURSOR' }, shards: {} }),
    ).toBeUndefined();
    expect(commandImageOf(undefined)).toBeUndefined();
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
      change({ id: '1', after: command({ idempotencyKey: 'a' }) }),
      change({ id: '2', after: command({ idempotencyKey: 'b' }) }),
      { id: '3', eventName: 'INSERT' } satisfies ChangeRecord,
    ];
    // Act
    const report = await forwardChanges(queue, changes, NOW);
    // Assess
    expect(sent).toEqual(['a', 'b']);
    expect(report).toEqual({ forwarded: 1, ignored: 1, failedIds: ['2'] });
  });
});
