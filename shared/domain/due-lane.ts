import type { EpochMs } from './notification.js';
import { NotificationState } from './states.js';

/**
 * The reconciler's two lanes. `urgent` holds what a token's expiry waits on: accepted commands the
 * queue may have lost, leases that may have run out, unknown outcomes. `poll` holds `sent` messages
 * whose final status is still to be read: informational, since the SMS went out. A pass serves the
 * urgent lane first, so status polls can never crowd out an expiry (issue #12's starvation).
 */
export const DueLane = {
  urgent: 'urgent',
  poll: 'poll',
} as const;
export type DueLane = (typeof DueLane)[keyof typeof DueLane];

/** The lane a command with this state is due in. */
export function dueLaneOf(state: NotificationState): DueLane {
  return state === NotificationState.sent ? DueLane.poll : DueLane.urgent;
}

/**
 * Share of a pass kept for the poll lane even when the urgent lane could use it all, so polls
 * still make progress (and reach their horizon) under a flood of unknowns.
 */
export const POLL_LANE_MIN_SHARE = 0.25;

/**
 * One entry of the due index as the scheduled pass reads it: only what routing needs. It is read
 * leniently (no reason or state validation), so an item this release cannot parse still reaches a
 * worker, which isolates it, instead of failing the whole pass.
 */
export interface DueEntry {
  readonly idempotencyKey: string;
  readonly shard: number;
  readonly dueAt: EpochMs;
  /** The record version the index copy carries (message dedupe; the worker re-reads strongly). */
  readonly version?: number;
  readonly state?: string;
  readonly unknownSince?: EpochMs;
}
