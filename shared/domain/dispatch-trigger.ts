import type { EpochMs } from './notification.js';
import { NotificationState } from './states.js';

/** What the "needs a dispatch message" rule reads of one version of a command. */
export interface CommandImage {
  readonly idempotencyKey: string;
  readonly state: NotificationState;
  readonly version: number;
  readonly nextAttemptAt?: EpochMs;
}

/** One change of a command, as a change stream reports it. */
export interface CommandChange {
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** The command before the change (absent on insert, or when the image is no command). */
  readonly before?: CommandImage;
  /** The command after the change (absent on removal, or when the image is no command). */
  readonly after?: CommandImage;
}

/**
 * The changes that can ask for a dispatch, as data: the forwarder decides with
 * {@link needsDispatch}, and the stack's event-source filter is built from this, so the two agree.
 */
export const DISPATCH_TRIGGER = {
  eventNames: ['INSERT', 'MODIFY'],
  /** The state the command is in after the change. */
  state: NotificationState.accepted,
} as const;

/**
 * A command needs a dispatch message when it is inserted as `accepted`, or modified into a new
 * version of `accepted` (a retry after backoff, a proven absence). A reschedule of an `accepted`
 * command (same version) does not: its message is already on the queue.
 */
export function needsDispatch(change: CommandChange): boolean {
  const { after, before } = change;
  if (after === undefined || after.state !== DISPATCH_TRIGGER.state) return false;
  if (!(DISPATCH_TRIGGER.eventNames as readonly string[]).includes(change.eventName)) return false;
  if (change.eventName === 'MODIFY' && before?.state === after.state && before.version === after.version) {
    return false;
  }
  return true;
}
