import { createHash } from 'node:crypto';

/** Allowed shape of an idempotency key (docs/design.md#identifiers). */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,255}$/;

/**
 * The key used when the caller sends none: deterministic in event, channel and template, so a
 * retried request for the same business action always lands on the same command.
 */
export function deriveIdempotencyKey(eventId: string, channel: string, template: string): string {
  const digest = createHash('sha256').update(`${eventId}\u0000${channel}\u0000${template}`).digest('hex');
  return `${channel}:${template}:${digest.slice(0, 40)}`;
}
